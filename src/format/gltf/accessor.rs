//! glTF buffers and accessors, decoded by hand: nothing the file says about where its data lies
//! is trusted until it is checked against the bytes that are really there.

#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::borrow::Cow;

use gltf_json::accessor::{ComponentType, Type};
use gltf_json::validation::Checked;

use super::doc::Doc;
use crate::error::{Error, Result, ResultExt};
use crate::format::{Budget, Checker, try_filled, try_vec};

/// The file's buffers, each exactly its `byteLength` long.
pub(crate) struct Buffers<'a> {
    pub root: &'a Doc,
    pub buffers: Vec<Cow<'a, [u8]>>,
    /// Per image: the file beside the model its URI names, where it was read.
    pub images: Vec<Option<&'a [u8]>>,
}

/// One decoded accessor: `count` elements of `width` components each.
pub(crate) struct Decoded<T> {
    pub width: usize,
    pub values: Vec<T>,
}

impl<T> Decoded<T> {
    pub fn count(&self) -> usize {
        self.values.len().checked_div(self.width).unwrap_or(0)
    }

    pub fn element(&self, i: usize) -> &[T] {
        let start = i.saturating_mul(self.width);
        self.values
            .get(start..start.saturating_add(self.width))
            .unwrap_or(&[])
    }
}

fn size_of(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

/// Component `b` as a float, normalised integers mapped as the specification says.
fn float_of(c: ComponentType, normalized: bool, b: &[u8]) -> f32 {
    let g = |i: usize| b.get(i).copied().unwrap_or(0);
    match c {
        ComponentType::F32 => f32::from_le_bytes([g(0), g(1), g(2), g(3)]),
        ComponentType::U32 => u32::from_le_bytes([g(0), g(1), g(2), g(3)]) as f32,
        ComponentType::I8 => {
            let v = f32::from(g(0) as i8);
            if normalized { (v / 127.0).max(-1.0) } else { v }
        }
        ComponentType::U8 => {
            let v = f32::from(g(0));
            if normalized { v / 255.0 } else { v }
        }
        ComponentType::I16 => {
            let v = f32::from(i16::from_le_bytes([g(0), g(1)]));
            if normalized {
                (v / 32767.0).max(-1.0)
            } else {
                v
            }
        }
        ComponentType::U16 => {
            let v = f32::from(u16::from_le_bytes([g(0), g(1)]));
            if normalized { v / 65535.0 } else { v }
        }
    }
}

/// Component `b` as an unsigned integer; None for a signed or float type.
fn uint_of(c: ComponentType, b: &[u8]) -> Option<u32> {
    let g = |i: usize| b.get(i).copied().unwrap_or(0);
    match c {
        ComponentType::U8 => Some(u32::from(g(0))),
        ComponentType::U16 => Some(u32::from(u16::from_le_bytes([g(0), g(1)]))),
        ComponentType::U32 => Some(u32::from_le_bytes([g(0), g(1), g(2), g(3)])),
        _ => None,
    }
}

fn width_of(t: Type) -> usize {
    match t {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 => 4,
        Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

/// What the caller accepts of an accessor.
#[derive(Clone, Copy)]
pub(crate) struct Want<'w> {
    pub what: &'w str,
    pub types: &'w [Type],
    pub components: &'w [ComponentType],
    /// Index data: no byte stride allowed on its view, no sparse storage.
    pub indices: bool,
}

impl<'a> Buffers<'a> {
    /// Buffer view `v`'s bytes and stride.
    pub fn view(&self, v: usize) -> Result<(&[u8], Option<usize>)> {
        let views = &self.root.buffer_views;
        let view = views.get(v).ok_or_else(|| {
            Error::malformed(format!(
                "buffer view {v} does not exist (the file has {})",
                views.len()
            ))
        })?;
        let b = view.buffer.value();
        let buffer = self.buffers.get(b).ok_or_else(|| {
            Error::malformed(format!(
                "buffer view {v}: buffer {b} does not exist (the file has {})",
                self.buffers.len()
            ))
        })?;
        let start = view.byte_offset.map_or(0, |o| o.0);
        let len = view.byte_length.0;
        let end = start.checked_add(len).filter(|&e| e <= buffer.len() as u64);
        let bytes = end
            .and_then(|e| buffer.get(start as usize..e as usize))
            .ok_or_else(|| {
                Error::truncated(format!(
                    "buffer view {v}: bytes {start}+{len} lie past the end of buffer {b} ({} bytes)",
                    buffer.len()
                ))
            })?;
        Ok((bytes, view.byte_stride.map(|s| s.0)))
    }

    /// Accessor `a` decoded with `convert`, after every check; `budget` counts what it holds.
    fn decode<T: Copy + Default>(
        &self,
        a: usize,
        want: Want,
        ck: &Checker,
        budget: &mut Budget,
        convert: impl Fn(ComponentType, bool, &[u8]) -> Option<T>,
    ) -> Result<Decoded<T>> {
        let accessors = &self.root.accessors;
        let acc = accessors.get(a).ok_or_else(|| {
            Error::malformed(format!(
                "{}: accessor {a} does not exist (the file has {})",
                want.what,
                accessors.len()
            ))
        })?;
        let mut inner = || {
            let c = match acc.component_type {
                Checked::Valid(g) => g.0,
                Checked::Invalid => {
                    return Err(Error::malformed("componentType is none of glTF's"));
                }
            };
            let t = match acc.type_ {
                Checked::Valid(t) => t,
                Checked::Invalid => return Err(Error::malformed("type is none of glTF's")),
            };
            if acc.normalized && matches!(c, ComponentType::F32 | ComponentType::U32) {
                return Err(Error::malformed(
                    "normalized is set on a float or 32-bit component type",
                ));
            }
            if !want.types.contains(&t) || !want.components.contains(&c) {
                return Err(Error::malformed(format!(
                    "a {t:?} of {c:?} cannot be {} (expected {:?} of {:?})",
                    want.what, want.types, want.components
                )));
            }
            let width = width_of(t);
            let csize = size_of(c);
            // Matrices of 8- and 16-bit components pad their columns; no attribute ossa reads is one.
            if matches!(t, Type::Mat2 | Type::Mat3) && csize < 4 {
                return Err(Error::unsupported(
                    "matrices of 8- or 16-bit components are not read",
                ));
            }
            // At most 16 components of 4 bytes.
            let elem = width.saturating_mul(csize);
            let count = acc.count.0;
            let values_len = count
                .checked_mul(width as u64)
                .ok_or_else(|| Error::limit(format!("count {count} overflows")))?;
            let mut values: Vec<T> = match acc.buffer_view {
                Some(v) => {
                    let v = v.value();
                    let (bytes, view_stride) = self.view(v)?;
                    if want.indices && view_stride.is_some() {
                        return Err(Error::malformed(format!(
                            "buffer view {v} of index data has a byteStride"
                        )));
                    }
                    let stride = match view_stride {
                        None => elem,
                        Some(s) if (4..=252).contains(&s) && s % 4 == 0 && s >= elem => s,
                        Some(s) => {
                            return Err(Error::malformed(format!(
                                "buffer view {v}: byteStride {s} is not a multiple of 4 from \
                                 max(4, {elem}) to 252"
                            )));
                        }
                    };
                    let offset = acc.byte_offset.map_or(0, |o| o.0);
                    if count > 0 {
                        let need = count
                            .saturating_sub(1)
                            .checked_mul(stride as u64)
                            .and_then(|x| x.checked_add(offset))
                            .and_then(|x| x.checked_add(elem as u64));
                        if need.is_none_or(|n| n > bytes.len() as u64) {
                            return Err(Error::truncated(format!(
                                "{count} elements of {elem} bytes, {stride} apart from byte \
                                 {offset}, do not fit buffer view {v} ({} bytes)",
                                bytes.len()
                            )));
                        }
                    }
                    budget.add(ck, values_len, std::mem::size_of::<T>() as u64)?;
                    let mut values = try_vec(values_len as usize, || "its elements".to_owned())?;
                    for e in 0..count as usize {
                        // Inside the view: the span of the last element was checked above.
                        let at = (offset as usize).wrapping_add(e.wrapping_mul(stride));
                        for k in 0..width {
                            let s = at.wrapping_add(k.wrapping_mul(csize));
                            let b = bytes.get(s..s.wrapping_add(csize)).unwrap_or(&[]);
                            values.push(convert(c, acc.normalized, b).ok_or_else(|| {
                                Error::malformed(format!("element {e} is not usable"))
                            })?);
                        }
                    }
                    values
                }
                None => {
                    budget.add(ck, values_len, std::mem::size_of::<T>() as u64)?;
                    try_filled(values_len as usize, T::default(), || {
                        "its elements".to_owned()
                    })?
                }
            };
            if let Some(sparse) = &acc.sparse {
                if want.indices {
                    return Err(Error::unsupported("sparse index data is not read"));
                }
                let n = sparse.count.0;
                if n > count {
                    return Err(Error::malformed(format!(
                        "sparse count {n} is more than the accessor's {count}"
                    )));
                }
                let ic = match sparse.indices.component_type {
                    Checked::Valid(c) => c.0,
                    Checked::Invalid => {
                        return Err(Error::malformed("sparse indices' componentType is invalid"));
                    }
                };
                let isize = size_of(ic);
                let iv = sparse.indices.buffer_view.value();
                let (ibytes, _) = self.view(iv)?;
                let ioff = sparse.indices.byte_offset.0;
                let vv = sparse.values.buffer_view.value();
                let (vbytes, _) = self.view(vv)?;
                let voff = sparse.values.byte_offset.0;
                let fits = |off: u64, size: usize, len: usize| {
                    n.checked_mul(size as u64)
                        .and_then(|x| x.checked_add(off))
                        .is_some_and(|end| end <= len as u64)
                };
                if !fits(ioff, isize, ibytes.len()) {
                    return Err(Error::truncated(format!(
                        "{n} sparse indices do not fit buffer view {iv} ({} bytes)",
                        ibytes.len()
                    )));
                }
                if !fits(voff, elem, vbytes.len()) {
                    return Err(Error::truncated(format!(
                        "{n} sparse values do not fit buffer view {vv} ({} bytes)",
                        vbytes.len()
                    )));
                }
                let mut previous: Option<u32> = None;
                for i in 0..n as usize {
                    let s = (ioff as usize).wrapping_add(i.wrapping_mul(isize));
                    let index = ibytes
                        .get(s..s.wrapping_add(isize))
                        .and_then(|b| uint_of(ic, b))
                        .ok_or_else(|| Error::malformed("sparse indices are not unsigned"))?;
                    if u64::from(index) >= count || previous.is_some_and(|p| index <= p) {
                        return Err(Error::malformed(format!(
                            "sparse index {i} is {index}: indices must increase strictly and stay \
                             below {count}"
                        )));
                    }
                    previous = Some(index);
                    for k in 0..width {
                        let s = (voff as usize)
                            .wrapping_add(i.wrapping_mul(elem))
                            .wrapping_add(k.wrapping_mul(csize));
                        let b = vbytes.get(s..s.wrapping_add(csize)).unwrap_or(&[]);
                        if let (Some(slot), Some(x)) = (
                            values.get_mut((index as usize).wrapping_mul(width).wrapping_add(k)),
                            convert(c, acc.normalized, b),
                        ) {
                            *slot = x;
                        }
                    }
                }
            }
            Ok(Decoded { width, values })
        };
        inner().within(|| format!("accessor {a} ({})", want.what))
    }

    /// Accessor `a` as floats (normalised integers mapped to their range).
    pub fn floats(
        &self,
        a: usize,
        want: Want,
        ck: &Checker,
        budget: &mut Budget,
    ) -> Result<Decoded<f32>> {
        let d = self.decode(a, want, ck, budget, |c, n, b| Some(float_of(c, n, b)))?;
        if let Some(i) = d.values.iter().position(|x| !x.is_finite()) {
            return Err(Error::malformed(format!(
                "element {} holds a NaN or infinity",
                i.checked_div(d.width).unwrap_or(0)
            ))
            .within(format!("accessor {a} ({})", want.what)));
        }
        Ok(d)
    }

    /// Accessor `a` as unsigned integers.
    pub fn uints(
        &self,
        a: usize,
        want: Want,
        ck: &Checker,
        budget: &mut Budget,
    ) -> Result<Decoded<u32>> {
        self.decode(a, want, ck, budget, |c, _, b| uint_of(c, b))
    }
}
