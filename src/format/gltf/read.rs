//! glTF 2.0 import: the GLB container or JSON text, buffers (the BIN chunk, `data:` URIs, files
//! beside the model through the sidecar rules), then nodes, skins, meshes and animations made
//! into ossa's model. See docs/gltf.md, "Import".

#![deny(clippy::indexing_slicing, clippy::arithmetic_side_effects)]

use std::borrow::Cow;

use base64::Engine;
use byteorder::LittleEndian;

use super::accessor::Buffers;
use super::axes::Axes;
use super::doc::{Doc, measure};
use crate::cursor::Cursor;
use crate::error::{Error, Result, ResultExt};
use crate::format::{Budget, Checker, Format, LoadOptions, ceiling};
use crate::io::{contained, read_contained_at_most};
use crate::model::ModelParts;
use crate::sidecar::Sidecars;
use std::collections::HashMap;

/// A GLB file's first four bytes.
pub const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;
/// The sampling rate where an animation's keys are not evenly spaced.
pub const DEFAULT_FPS: f32 = 30.0;

/// Whether `data` is glTF JSON: an object whose `asset.version` starts with "2".
pub fn looks_like_json(data: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Asset {
        version: String,
    }
    #[derive(serde::Deserialize)]
    struct Head {
        asset: Asset,
    }
    let start = data.iter().position(|b| !b.is_ascii_whitespace());
    if start.and_then(|s| data.get(s)) != Some(&b'{') {
        return false;
    }
    serde_json::from_slice::<Head>(data).is_ok_and(|h| h.asset.version.starts_with('2'))
}

/// The JSON chunk and the BIN chunk of a GLB.
fn split_glb<'a>(data: &'a [u8], ck: &mut Checker) -> Result<(&'a [u8], Option<&'a [u8]>)> {
    let mut c = Cursor::<LittleEndian>::at(data, 0)?;
    if c.bytes(4)? != GLB_MAGIC {
        return Err(Error::unknown_format("GLB header: the magic is not `glTF`").at(0));
    }
    let version = c.u32()?;
    if version != 2 {
        return Err(Error::unsupported(format!("GLB header: version {version}, not 2")).at(4));
    }
    let length = u64::from(c.u32()?);
    if length > data.len() as u64 {
        return Err(Error::truncated(format!(
            "GLB header: length {length}, but the data holds {} bytes",
            data.len()
        ))
        .at(8));
    }
    if length < data.len() as u64 {
        return Err(Error::malformed(format!(
            "GLB header: length {length}, but the data holds {} bytes",
            data.len()
        ))
        .at(8));
    }
    let mut json = None;
    let mut bin = None;
    let mut index = 0u32;
    while c.pos() < length {
        let at = c.pos();
        let len = c.u32()?;
        let kind = c.u32()?;
        let body = c
            .bytes(len as usize)
            .map_err(|e| e.within(format!("GLB chunk {index}")))?;
        if len % 4 != 0 {
            ck.tolerate(
                Error::malformed(format!(
                    "GLB chunk {index}: length {len} is not a multiple of 4"
                ))
                .at(at),
            )?;
        }
        match (index, kind) {
            (0, CHUNK_JSON) => json = Some(body),
            (0, _) => {
                return Err(
                    Error::malformed(format!("GLB chunk 0: type {kind:#x}, not JSON"))
                        .at(at.saturating_add(4)),
                );
            }
            (1, CHUNK_BIN) => bin = Some(body),
            // Chunks of other types are for extensions, and are skipped as the spec says.
            _ => {}
        }
        index = index.saturating_add(1);
    }
    let json = json.ok_or_else(|| Error::truncated("GLB: no JSON chunk").at(12))?;
    Ok((json, bin))
}

fn percent_decode(uri: &str) -> Result<String> {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            let hex = b
                .get(i.saturating_add(1)..i.saturating_add(3))
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| Error::malformed(format!("URI {uri:?}: a bad % escape")))?;
            out.push(hex);
            i = i.saturating_add(3);
        } else {
            out.push(c);
            i = i.saturating_add(1);
        }
    }
    String::from_utf8(out).map_err(|_| Error::malformed(format!("URI {uri:?} is not UTF-8")))
}

/// The bytes of a `data:` URI.
pub(crate) fn data_uri(uri: &str, ck: &Checker, budget: &mut Budget) -> Result<Vec<u8>> {
    let (head, body) = uri
        .split_once(',')
        .ok_or_else(|| Error::malformed("a data URI without a comma"))?;
    if !head.ends_with(";base64") {
        return Err(Error::unsupported("a data URI that is not base64"));
    }
    budget.add(ck, (body.len() as u64 / 4).saturating_mul(3), 1)?;
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| Error::malformed(format!("bad base64: {e}")))
}

/// The source's frame: the axes and scale an ossa export wrote (`asset.extras`), else glTF's.
pub(crate) fn source_frame(root: &Doc, ck: &mut Checker) -> Result<(Axes, f32, Option<Format>)> {
    let Some(raw) = &root.asset.extras else {
        return Ok((Axes::IDENTITY, 1.0, None));
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(raw.get()) else {
        return Ok((Axes::IDENTITY, 1.0, None));
    };
    let Some(name) = v.get("source_format").and_then(|s| s.as_str()) else {
        return Ok((Axes::IDENTITY, 1.0, None));
    };
    let Some(format) = Format::ALL.into_iter().find(|f| f.name() == name) else {
        return Ok((Axes::IDENTITY, 1.0, None));
    };
    let axes = Axes::for_format(format);
    // "glTF (x, y, z) = SCALE x native (..)", as the export writes it.
    let text = v.get("axes").and_then(|a| a.as_str()).unwrap_or("");
    let parsed = text
        .strip_prefix("glTF (x, y, z) = ")
        .and_then(|t| t.split_once(" x native "))
        .and_then(|(s, a)| Some((s.parse::<f32>().ok()?, a)));
    match parsed {
        Some((scale, described))
            if described == axes.describe() && scale.is_finite() && scale > 0.0 =>
        {
            Ok((axes, scale, Some(format)))
        }
        _ => {
            ck.tolerate(Error::malformed(format!(
                "asset.extras names source format {name} but its axes {text:?} are not the \
                 export's; the file is read in glTF's own frame"
            )))?;
            Ok((Axes::IDENTITY, 1.0, None))
        }
    }
}

/// A node's extras as JSON, where they are an object.
pub(crate) fn extras_of(raw: &gltf_json::Extras) -> Option<serde_json::Value> {
    raw.as_ref()
        .and_then(|r| serde_json::from_str::<serde_json::Value>(r.get()).ok())
}

/// Reads a `.glb` (`binary`) or `.gltf`.
pub(crate) fn read(
    data: &[u8],
    binary: bool,
    ck: &mut Checker,
    options: &LoadOptions,
    sidecars: Option<&Sidecars>,
) -> Result<ModelParts> {
    let (json, bin) = if binary {
        split_glb(data, ck)?
    } else {
        (data, None)
    };
    let mut budget = Budget::default();
    // serde's tree cannot be charged as it grows: the document is counted first, and what its
    // tree can hold at the most is charged before it is parsed.
    let counted = measure(json)?;
    let tree = counted.tree_bytes();
    ck.reserve(tree, &counted.describe())?;
    budget.add(ck, tree, 1)?;
    let root: Doc = serde_json::from_slice(json).map_err(|e| {
        let msg = format!("JSON: {e}");
        if e.is_eof() {
            Error::truncated(msg)
        } else {
            Error::malformed(msg)
        }
    })?;
    if !root.asset.version.starts_with('2') {
        return Err(Error::unsupported(format!(
            "asset.version {:?}: only glTF 2 is read",
            root.asset.version
        )));
    }
    if let Some(ext) = root.extensions_required.first() {
        return Err(Error::unsupported(format!(
            "extensionsRequired names {ext}, which ossa does not implement"
        )));
    }

    // Files beside the model, each read once however many buffers and images name it, and
    // for buffers only as far as the longest byteLength that names it.
    let mut input = data.len() as u64;
    let mut files = Files::default();
    for (i, b) in root.buffers.iter().enumerate() {
        if let Some(uri) = b.uri.as_deref().filter(|u| !u.starts_with("data:")) {
            files
                .want(uri, Some(b.byte_length.0))
                .within(|| format!("buffer {i}"))?;
        }
    }
    if sidecars.is_some() {
        for image in &root.images {
            if let Some(uri) = image.uri.as_deref().filter(|u| !u.starts_with("data:")) {
                // An image's bad URI is a warning where it is read below.
                let _ = files.want(uri, None);
            }
        }
    }
    files.read(sidecars, options, ck, &mut budget, &mut input)?;

    // Buffers, each exactly its byteLength.
    let mut buffers: Vec<Cow<[u8]>> = Vec::with_capacity(root.buffers.len().min(1024));
    for (i, b) in root.buffers.iter().enumerate() {
        let want = b.byte_length.0;
        let bytes: Cow<[u8]> = match b.uri.as_deref() {
            None if i == 0 && bin.is_some() => Cow::Borrowed(bin.unwrap_or(&[])),
            None => {
                return Err(Error::malformed(format!(
                    "buffer {i}: no uri, and it is not the GLB's BIN chunk"
                )));
            }
            Some(uri) if uri.starts_with("data:") => {
                Cow::Owned(data_uri(uri, ck, &mut budget).within(|| format!("buffer {i}"))?)
            }
            Some(uri) => Cow::Borrowed(files.get(uri).within(|| format!("buffer {i}"))?),
        };
        if (bytes.len() as u64) < want {
            return Err(Error::truncated(format!(
                "buffer {i}: holds {} bytes, fewer than its byteLength {want}",
                bytes.len()
            )));
        }
        buffers.push(match bytes {
            Cow::Borrowed(b) => Cow::Borrowed(b.get(..want as usize).unwrap_or(b)),
            Cow::Owned(mut v) => {
                v.truncate(want as usize);
                Cow::Owned(v)
            }
        });
    }
    // Images in files beside the model, read as buffers are. One that cannot be read is a
    // warning, as a missing texture is for every format: the model is whole without it.
    let mut images = Vec::with_capacity(root.images.len().min(1024));
    let mut warnings = Vec::new();
    for (i, image) in root.images.iter().enumerate() {
        let uri = image.uri.as_deref().filter(|u| !u.starts_with("data:"));
        let bytes = match uri {
            Some(uri) if sidecars.is_some() => match files.get(uri) {
                Ok(bytes) => Some(bytes),
                Err(e) => {
                    warnings.push(format!("image {i}: {e}; its meshes go untextured"));
                    None
                }
            },
            _ => None,
        };
        images.push(bytes);
    }
    let bufs = Buffers {
        root: &root,
        buffers,
        images,
    };
    let mut parts = super::build::build(&root, &bufs, binary, ck, options, &mut budget)?;
    parts.warnings.extend(warnings);
    Ok(parts)
}

/// The files beside the model that buffers and images name, by their decoded path.
#[derive(Default)]
struct Files {
    /// Path, then the most bytes a buffer needs of it (None: all of it, for an image).
    wanted: Vec<(String, Option<u64>)>,
    /// What reading each gave: its bytes, or why there are none.
    read: HashMap<String, std::result::Result<Vec<u8>, Error>>,
}

impl Files {
    /// Notes that `uri` is read, `len` bytes of it for a buffer.
    fn want(&mut self, uri: &str, len: Option<u64>) -> Result<()> {
        let path = percent_decode(uri)?;
        contained(&path)?;
        match self.wanted.iter_mut().find(|(p, _)| *p == path) {
            Some((_, have)) => {
                *have = match (*have, len) {
                    (Some(a), Some(b)) => Some(a.max(b)),
                    _ => None,
                }
            }
            None => self.wanted.push((path, len)),
        }
        Ok(())
    }

    /// Reads every wanted file once, through the sidecar rules: relative, no `..`, inside the
    /// model's directory, at most what the memory limit leaves. Over the limit is the load's
    /// failure; a file that cannot be read is its reader's (a buffer's error, an image's
    /// warning).
    fn read(
        &mut self,
        sidecars: Option<&Sidecars>,
        options: &LoadOptions,
        ck: &mut Checker,
        budget: &mut Budget,
        input: &mut u64,
    ) -> Result<()> {
        for (path, len) in std::mem::take(&mut self.wanted) {
            let got = match sidecars {
                None => Err(Error::not_found(format!(
                    "{path:?} is a file beside the model, and there is no filesystem to read it \
                     from (load the file, or pass one)"
                ))),
                Some(s) => {
                    let full = format!("{}{path}", s.dir);
                    let room = ceiling(options.max_bytes, u64::MAX).saturating_sub(ck.charged());
                    let read = match len {
                        Some(len) => {
                            contained(&full).and_then(|full| s.fs.read_prefix(full, len, room))
                        }
                        None => read_contained_at_most(s.fs, &full, room),
                    };
                    read.map(|file| {
                        let bytes = (*file).as_ref();
                        // A filesystem may give more than the prefix asked for.
                        let keep = len.map_or(bytes.len(), |l| {
                            bytes.len().min(usize::try_from(l).unwrap_or(usize::MAX))
                        });
                        bytes.get(..keep).unwrap_or(bytes).to_vec()
                    })
                }
            };
            if let Ok(bytes) = &got {
                *input = input.saturating_add(bytes.len() as u64);
                ck.grow_input(options, *input);
                budget.add(ck, bytes.len() as u64, 1)?;
            }
            if let Err(e) = &got
                && e.code() == crate::error::ErrorCode::Limit
            {
                return Err(e.duplicate());
            }
            self.read.insert(path, got);
        }
        Ok(())
    }

    /// The bytes of the file `uri` names, as [`Files::read`] found them.
    fn get(&self, uri: &str) -> Result<&[u8]> {
        let path = percent_decode(uri)?;
        contained(&path)?;
        match self.read.get(&path) {
            Some(Ok(bytes)) => Ok(bytes),
            Some(Err(e)) => Err(e.duplicate()),
            None => Err(Error::not_found(format!("{path:?} was not read"))),
        }
    }
}
