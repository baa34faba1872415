//! The parts of a glTF document import reads, and what parsing them costs before they are
//! parsed.
//!
//! [`Doc`] keeps the top-level arrays ossa's rules read (gltf-json's own types) and leaves the
//! rest (cameras, extensions, the root's extras) unparsed. Nodes, which a skeleton has by the
//! hundred thousand, are kept compact ([`Node`]): children as a boxed slice, transforms and
//! extras boxed only where a node has them, and of the extras only the `name` and `flags` an
//! ossa export writes and the Sims members (VitaMoo's), as their text.
//!
//! serde's tree cannot be charged to the memory limit as it grows, so [`measure`] counts the
//! document first, in one pass over its bytes without allocating, and [`Measure::tree_bytes`]
//! bounds what the parsed [`Doc`] can hold: the load is refused before parsing what would not fit.

#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::fmt;
use std::marker::PhantomData;

use gltf_json::{
    Accessor, Animation, Asset, Buffer, Image, Index, Material, Mesh, Scene, Skin, Texture, buffer,
    texture,
};
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, Visitor};

use crate::error::{Error, Result};

/// What import reads of a glTF document: gltf-json's `Root` without cameras, extensions and
/// the root's extras, with compact nodes.
#[derive(Deserialize)]
pub(crate) struct Doc {
    #[serde(default)]
    pub accessors: Vec<Accessor>,
    #[serde(default)]
    pub animations: Vec<Animation>,
    pub asset: Asset,
    #[serde(default)]
    pub buffers: Vec<Buffer>,
    #[serde(default, rename = "bufferViews")]
    pub buffer_views: Vec<buffer::View>,
    pub scene: Option<Index<Scene>>,
    #[serde(default, rename = "extensionsRequired")]
    pub extensions_required: Vec<String>,
    #[serde(default)]
    pub images: Vec<Image>,
    #[serde(default)]
    pub materials: Vec<Material>,
    #[serde(default)]
    pub meshes: Vec<Mesh>,
    #[serde(default)]
    pub nodes: Vec<Node>,
    #[serde(default)]
    pub samplers: Vec<texture::Sampler>,
    #[serde(default)]
    pub scenes: Vec<Scene>,
    #[serde(default)]
    pub skins: Vec<Skin>,
    #[serde(default)]
    pub textures: Vec<Texture>,
}

/// A node as import reads it.
#[derive(Deserialize)]
#[serde(from = "NodeIn")]
pub(crate) struct Node {
    pub children: Option<Box<[u32]>>,
    pub mesh: Option<u32>,
    pub skin: Option<u32>,
    pub transform: Option<Box<Transform>>,
    pub name: Option<Box<str>>,
    pub extras: Option<Box<NodeExtras>>,
}

impl Node {
    /// The node's children (node indices, unchecked).
    pub fn children(&self) -> &[u32] {
        self.children.as_deref().unwrap_or(&[])
    }
}

/// A node's transform, where it has one: its matrix (which wins over TRS), else TRS with the
/// missing parts at their defaults.
pub(crate) enum Transform {
    Matrix([f32; 16]),
    Trs {
        t: [f32; 3],
        r: [f32; 4],
        s: [f32; 3],
    },
}

/// What import reads of a node's extras: the `name` and `flags` an ossa export writes, and the
/// Sims members ([`is_sims_key`]) as their JSON text, read once the bones are known.
#[derive(Default)]
pub(crate) struct NodeExtras {
    pub name: Option<Box<str>>,
    pub flags: Option<u64>,
    pub sims: Vec<(Box<str>, Box<serde_json::value::RawValue>)>,
}

impl NodeExtras {
    /// The Sims member `key`, the last of repeated keys.
    pub fn sims(&self, key: &str) -> Option<&serde_json::value::RawValue> {
        (self.sims.iter().rev())
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| v.as_ref())
    }
}

/// A node's extras member that carries Sims data: VitaMoo's (`vitamoo_...`) and what ossa keeps
/// beside them (see `vitamoo.rs`).
pub(crate) fn is_sims_key(key: &str) -> bool {
    key.starts_with("vitamoo_") || matches!(key, "suits" | "skills" | "properties" | "wiggle_value")
}

/// A node as the file writes it, for one node at a time.
#[derive(Deserialize)]
struct NodeIn {
    children: Option<Vec<u32>>,
    matrix: Option<[f32; 16]>,
    mesh: Option<u32>,
    skin: Option<u32>,
    name: Option<String>,
    rotation: Option<[f32; 4]>,
    scale: Option<[f32; 3]>,
    translation: Option<[f32; 3]>,
    #[serde(default)]
    extras: Option<NodeExtras>,
}

impl From<NodeIn> for Node {
    fn from(n: NodeIn) -> Node {
        let transform = match (n.matrix, n.translation, n.rotation, n.scale) {
            (Some(m), ..) => Some(Box::new(Transform::Matrix(m))),
            (None, None, None, None) => None,
            (None, t, r, s) => Some(Box::new(Transform::Trs {
                t: t.unwrap_or([0.0; 3]),
                r: r.unwrap_or([0.0, 0.0, 0.0, 1.0]),
                s: s.unwrap_or([1.0; 3]),
            })),
        };
        Node {
            children: n.children.map(Vec::into_boxed_slice),
            mesh: n.mesh,
            skin: n.skin,
            transform,
            name: n.name.map(String::into_boxed_str),
            extras: n
                .extras
                .filter(|e| e.name.is_some() || e.flags.is_some() || !e.sims.is_empty())
                .map(Box::new),
        }
    }
}

/// A value read from whatever JSON value the file has: the kinds it does not read give its
/// default (an array's or another object's contents skipped).
trait FromAny: Default {
    /// An object, its entries read or skipped.
    fn object<'de, A: MapAccess<'de>>(mut map: A) -> std::result::Result<Self, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Self::default())
    }

    /// An integer of 0 or more.
    fn unsigned(_: u64) -> Self {
        Self::default()
    }

    fn text(_: &str) -> Self {
        Self::default()
    }
}

/// The visitor of a [`FromAny`] type: it takes any JSON value.
struct AnyValue<T>(PhantomData<T>);

impl<'de, T: FromAny> Visitor<'de> for AnyValue<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<T, A::Error> {
        T::object(map)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(T::default())
    }
    fn visit_bool<E>(self, _: bool) -> std::result::Result<T, E> {
        Ok(T::default())
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<T, E> {
        Ok(u64::try_from(v).map_or_else(|_| T::default(), T::unsigned))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<T, E> {
        Ok(T::unsigned(v))
    }
    fn visit_f64<E>(self, _: f64) -> std::result::Result<T, E> {
        Ok(T::default())
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<T, E> {
        Ok(T::text(v))
    }
    fn visit_unit<E>(self) -> std::result::Result<T, E> {
        Ok(T::default())
    }
}

/// Any JSON value: an object's `name` where it is a string, its `flags` where they are an
/// unsigned integer (the last of repeated keys); anything else reads as no extras.
impl FromAny for NodeExtras {
    fn object<'de, A: MapAccess<'de>>(mut map: A) -> std::result::Result<Self, A::Error> {
        let mut out = NodeExtras::default();
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match key.as_ref() {
                "name" => out.name = map.next_value::<Scalar>()?.text,
                "flags" => out.flags = map.next_value::<Scalar>()?.unsigned,
                k if is_sims_key(k) => {
                    let value = map.next_value::<Box<serde_json::value::RawValue>>()?;
                    out.sims.push((k.into(), value));
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for NodeExtras {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<NodeExtras, D::Error> {
        d.deserialize_any(AnyValue(PhantomData))
    }
}

/// One JSON value, of which a string or an unsigned integer is kept.
#[derive(Default)]
struct Scalar {
    text: Option<Box<str>>,
    unsigned: Option<u64>,
}

impl FromAny for Scalar {
    fn unsigned(v: u64) -> Scalar {
        Scalar {
            unsigned: Some(v),
            ..Scalar::default()
        }
    }

    fn text(v: &str) -> Scalar {
        Scalar {
            text: Some(v.into()),
            ..Scalar::default()
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Scalar, D::Error> {
        d.deserialize_any(AnyValue(PhantomData))
    }
}

/// Nesting deeper than serde_json reads (its recursion limit) is refused by the count.
const MAX_DEPTH: usize = 128;

/// What a part of the document holds: one top-level member's value.
#[derive(Clone, Copy, Default, Debug)]
struct Counts {
    /// Values directly in the member's array: nodes, meshes, accessors...
    elements: u64,
    /// Objects and arrays deeper down.
    nested_objects: u64,
    nested_arrays: u64,
    /// Numbers, strings and literals inside those deeper arrays.
    array_values: u64,
    /// Members of the deeper objects (a map's entries).
    members: u64,
    /// Bytes of strings (keys included).
    string_bytes: u64,
    /// Bytes of `extras` values, which gltf-json keeps as their text.
    raw_bytes: u64,
}

/// Which top-level member a byte belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Part {
    /// `nodes`: compact [`Node`]s.
    Nodes,
    /// A member [`Doc`] keeps in gltf-json's types (or one whose escaped name could be one).
    Kept,
    /// A member [`Doc`] leaves unparsed.
    Skipped,
}

const KEPT: &[&[u8]] = &[
    b"accessors",
    b"animations",
    b"asset",
    b"buffers",
    b"bufferViews",
    b"scene",
    b"extensionsRequired",
    b"images",
    b"materials",
    b"meshes",
    b"samplers",
    b"scenes",
    b"skins",
    b"textures",
];

/// A glTF document counted before it is parsed.
#[derive(Default, Debug)]
pub(crate) struct Measure {
    pub values: u64,
    pub objects: u64,
    pub arrays: u64,
    pub strings: u64,
    pub string_bytes: u64,
    nodes: Counts,
    kept: Counts,
}

impl Measure {
    /// The most the parsed [`Doc`] can hold: each kept element at its type's size (twice, for
    /// a vector's growth), what hangs under it at the most its types can make of it, every
    /// string's bytes and every `extras` text.
    pub fn tree_bytes(&self) -> u64 {
        let size = |n: usize| n as u64;
        let twice = |n: usize| (n as u64).saturating_mul(2);
        let largest_element = [
            size_of::<Accessor>(),
            size_of::<Animation>(),
            size_of::<Buffer>(),
            size_of::<buffer::View>(),
            size_of::<Image>(),
            size_of::<Material>(),
            size_of::<Mesh>(),
            size_of::<texture::Sampler>(),
            size_of::<Scene>(),
            size_of::<Skin>(),
            size_of::<Texture>(),
            size_of::<String>(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        let largest_nested = [
            size_of::<gltf_json::mesh::Primitive>(),
            size_of::<gltf_json::animation::Channel>(),
            size_of::<gltf_json::animation::Sampler>(),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        // A B-tree map (a primitive's attributes) takes a node of up to 11 entries for its
        // first entry: about 400 bytes at most, and 64 a further entry.
        const MAP_NODE: u64 = 512;
        const MAP_ENTRY: u64 = 64;
        let n = &self.nodes;
        let k = &self.kept;
        let node_bytes = [
            n.elements.saturating_mul(twice(size_of::<Node>())),
            n.nested_arrays.saturating_mul(size(size_of::<Transform>())),
            n.nested_objects
                .saturating_mul(size(size_of::<NodeExtras>())),
            n.array_values.saturating_mul(8),
            n.string_bytes,
            // Sims members are kept as their text, each with its key.
            n.raw_bytes,
            n.members
                .saturating_mul(size(size_of::<(Box<str>, Box<str>)>())),
        ];
        let kept_bytes = [
            k.elements.saturating_mul(twice(largest_element)),
            k.nested_objects
                .saturating_mul(twice(largest_nested).saturating_add(MAP_NODE)),
            k.members.saturating_mul(MAP_ENTRY),
            k.array_values.saturating_mul(16),
            k.string_bytes,
            k.raw_bytes,
        ];
        crate::format::total(node_bytes.into_iter().chain(kept_bytes))
    }

    /// For a refusal: what was counted.
    pub fn describe(&self) -> String {
        format!(
            "the glTF JSON ({} values: {} objects, {} arrays, {} strings of {} bytes)",
            self.values, self.objects, self.arrays, self.strings, self.string_bytes
        )
    }
}

/// Counts `json`'s values, objects, arrays, strings and their bytes in one pass, for
/// [`Measure::tree_bytes`]. The text is not checked: what is not JSON fails the parse that
/// follows; only nesting deeper than serde_json reads is refused here.
pub(crate) fn measure(json: &[u8]) -> Result<Measure> {
    let mut m = Measure::default();
    // Per depth: whether the container there is an object.
    let mut is_object = [false; MAX_DEPTH + 2];
    let mut depth = 0usize;
    // In an object, before a member's `:`: the next string is its key.
    let mut expect_key = false;
    let mut part = Part::Skipped;
    // An `extras` member's value being counted: the depth of its object and where it starts.
    let mut raw: Option<(usize, usize)> = None;
    let mut i = 0usize;
    let object_at = |is_object: &[bool; MAX_DEPTH + 2], d: usize| -> bool {
        is_object.get(d).copied().unwrap_or(false)
    };
    while let Some(&b) = json.get(i) {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i = i.saturating_add(1);
                continue;
            }
            b'"' => {
                let start = i.saturating_add(1);
                let mut j = start;
                let mut escaped = false;
                loop {
                    match json.get(j) {
                        Some(b'\\') => {
                            escaped = true;
                            j = j.saturating_add(2);
                        }
                        Some(b'"') | None => break,
                        Some(_) => j = j.saturating_add(1),
                    }
                }
                let text = json.get(start..j).unwrap_or(&[]);
                let len = text.len() as u64;
                m.strings = m.strings.saturating_add(1);
                m.string_bytes = m.string_bytes.saturating_add(len);
                let counts = match part {
                    Part::Nodes => Some(&mut m.nodes),
                    Part::Kept => Some(&mut m.kept),
                    Part::Skipped => None,
                };
                if expect_key && object_at(&is_object, depth) {
                    if depth == 1 {
                        part = if escaped {
                            Part::Kept
                        } else if text == b"nodes" {
                            Part::Nodes
                        } else if KEPT.contains(&text) {
                            Part::Kept
                        } else {
                            Part::Skipped
                        };
                    } else if let Some(c) = counts {
                        c.string_bytes = c.string_bytes.saturating_add(len);
                        if depth > 2 {
                            c.members = c.members.saturating_add(1);
                        }
                        if raw.is_none() && (escaped || text == b"extras") {
                            raw = Some((depth, j.saturating_add(1)));
                        }
                    }
                } else {
                    m.values = m.values.saturating_add(1);
                    if let Some(c) = counts {
                        c.string_bytes = c.string_bytes.saturating_add(len);
                        value_in(c, &is_object, depth);
                    }
                }
                i = j.saturating_add(1);
                continue;
            }
            b'{' | b'[' => {
                m.values = m.values.saturating_add(1);
                if b == b'{' {
                    m.objects = m.objects.saturating_add(1);
                } else {
                    m.arrays = m.arrays.saturating_add(1);
                }
                let counts = match part {
                    Part::Nodes => Some(&mut m.nodes),
                    Part::Kept => Some(&mut m.kept),
                    Part::Skipped => None,
                };
                if let Some(c) = counts {
                    if depth == 2 && !object_at(&is_object, 2) {
                        c.elements = c.elements.saturating_add(1);
                    } else if depth >= 2 {
                        if b == b'{' {
                            c.nested_objects = c.nested_objects.saturating_add(1);
                        } else {
                            c.nested_arrays = c.nested_arrays.saturating_add(1);
                        }
                        if depth >= 3 && !object_at(&is_object, depth) {
                            c.array_values = c.array_values.saturating_add(1);
                        }
                    }
                }
                depth = depth.saturating_add(1);
                let slot = is_object.get_mut(depth).ok_or_else(|| {
                    Error::malformed(format!(
                        "JSON: nested deeper than {MAX_DEPTH} levels, more than is read"
                    ))
                })?;
                *slot = b == b'{';
                expect_key = b == b'{';
            }
            b'}' | b']' => {
                if let Some((d, start)) = raw
                    && d == depth
                {
                    let c = if part == Part::Nodes {
                        &mut m.nodes
                    } else {
                        &mut m.kept
                    };
                    c.raw_bytes = c.raw_bytes.saturating_add(i.saturating_sub(start) as u64);
                    raw = None;
                }
                depth = depth.saturating_sub(1);
                expect_key = false;
            }
            b',' => {
                if let Some((d, start)) = raw
                    && d == depth
                {
                    let c = if part == Part::Nodes {
                        &mut m.nodes
                    } else {
                        &mut m.kept
                    };
                    c.raw_bytes = c.raw_bytes.saturating_add(i.saturating_sub(start) as u64);
                    raw = None;
                }
                expect_key = object_at(&is_object, depth);
            }
            b':' => expect_key = false,
            _ => {
                // A number or literal: up to the next structural byte or space.
                let mut j = i;
                while let Some(&c) = json.get(j) {
                    if matches!(
                        c,
                        b',' | b'}'
                            | b']'
                            | b':'
                            | b'"'
                            | b'{'
                            | b'['
                            | b' '
                            | b'\t'
                            | b'\n'
                            | b'\r'
                    ) {
                        break;
                    }
                    j = j.saturating_add(1);
                }
                m.values = m.values.saturating_add(1);
                let counts = match part {
                    Part::Nodes => Some(&mut m.nodes),
                    Part::Kept => Some(&mut m.kept),
                    Part::Skipped => None,
                };
                if let Some(c) = counts {
                    value_in(c, &is_object, depth);
                }
                i = j.max(i.saturating_add(1));
                continue;
            }
        }
        i = i.saturating_add(1);
    }
    Ok(m)
}

/// Counts a scalar at `depth` of a top-level member.
fn value_in(c: &mut Counts, is_object: &[bool; MAX_DEPTH + 2], depth: usize) {
    let in_array = !is_object.get(depth).copied().unwrap_or(true);
    if depth == 2 && in_array {
        c.elements = c.elements.saturating_add(1);
    } else if depth >= 3 && in_array {
        c.array_values = c.array_values.saturating_add(1);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_part() {
        let json = br#"{"asset":{"version":"2.0","extras":{"a":[1,2]}},
            "nodes":[{"children":[1,2],"name":"ab"},{"translation":[1,2,3]},{}],
            "cameras":[{"x":1}],"meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}]}"#;
        let m = measure(json).unwrap();
        assert_eq!(m.nodes.elements, 3);
        assert_eq!(m.nodes.nested_arrays, 2);
        assert_eq!(m.nodes.array_values, 5);
        assert_eq!(m.kept.elements, 1);
        assert_eq!(m.kept.nested_objects, 3);
        assert_eq!(m.kept.raw_bytes, br#":{"a":[1,2]}"#.len() as u64);
        assert_eq!(m.objects, 10);
        assert_eq!(m.arrays, 7);
        assert!(m.tree_bytes() > 0);
    }

    #[test]
    fn refuses_nesting_serde_does_not_read() {
        let deep = "[".repeat(200);
        assert!(measure(deep.as_bytes()).is_err());
        assert!(measure("[".repeat(100).as_bytes()).is_ok());
    }
}
