//! Building the meshes of a `.mod` from its records, as the parent module's documentation says.
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::ops::Range;

use super::{Adj, Counted, Key, Material, Packet, Prim, Raw, Runs, Shape};
use crate::error::{Error, Result};
use crate::format::mm2::{Tally, WHITE, amount};
use crate::format::text::show;
use crate::format::{Checker, Format};
use crate::model::{BoneSlots, Influence, MeshParts, ModelParts, Name};

/// The lists corners index, and which bone each position and normal has.
struct Tables {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    /// The `c` records as bytes.
    colors: Vec<[u8; 4]>,
    tex1: Vec<[f32; 2]>,
    tex2: u64,
    position_bones: Option<Vec<u32>>,
    normal_bones: Option<Vec<u32>>,
    /// Corners whose packet gives them another bone than `mtxv` does.
    position_mismatch: Tally,
    /// Corners whose normal `mtxn` gives another bone than the corner's.
    normal_mismatch: Tally,
}

/// A `c` record's red, green, blue and alpha (0 to 1) as bytes: `v * 255` rounded to the
/// nearest, halves away from 0, and clamped to 0..=255 (NaN, reported when read, is 0 by then).
fn color_bytes(c: [f32; 4]) -> [u8; 4] {
    c.map(|v| (v * 255.0).round().clamp(0.0, 255.0) as u8)
}

/// A corner as one vertex.
struct Vertex {
    influence: Influence,
    uv: [f32; 2],
    color: [u8; 4],
}

/// `list[i]` when `i` is an index into it.
fn pick<T: Copy>(list: &[T], i: i64) -> Option<T> {
    usize::try_from(i).ok().and_then(|i| list.get(i)).copied()
}

impl Tables {
    /// The vertex of a corner following `bone` (None: its position's bone). Indices out of range
    /// are reported and read as nothing.
    fn vertex(
        &mut self,
        adj: &Adj,
        bone: Option<u32>,
        what: &dyn Fn() -> String,
        ck: &mut Checker,
    ) -> Result<Vertex> {
        let [v, n, c, t1, t2, _] = adj.index;
        let mut bad = |i: i64, of: &str, len: u64| {
            ck.problem(
                Error::malformed(format!(
                    "{}: {of} index {i} out of range (the file has {len})",
                    what()
                ))
                .on_line(adj.line),
            )
        };
        let origin = pick(&self.positions, v);
        if origin.is_none() {
            bad(v, "position", self.positions.len() as u64)?;
        }
        // An index into a list the file leaves empty must be 0.
        let lengths = [
            (n, "normal", self.normals.len() as u64),
            (c, "colour", self.colors.len() as u64),
            (t1, "tex1", self.tex1.len() as u64),
            (t2, "tex2", self.tex2),
        ];
        for (i, of, len) in lengths {
            let fits = u64::try_from(i).is_ok_and(|i| i < len || (len == 0 && i == 0));
            if !fits {
                bad(i, of, len)?;
            }
        }
        let normal = pick(&self.normals, n);
        let uv = pick(&self.tex1, t1);
        let color = pick(&self.colors, c);
        let own = self.position_bones.as_deref().and_then(|b| pick(b, v));
        let bone = match (bone, own) {
            (Some(b), Some(o)) if b != o => {
                self.position_mismatch.note(adj.line, || {
                    format!("{}: bone {b} by its packet, bone {o} by `mtxv`", what())
                });
                b
            }
            (Some(b), _) => b,
            (None, o) => o.unwrap_or(0),
        };
        if let Some(nb) = self.normal_bones.as_deref().and_then(|b| pick(b, n))
            && nb != bone
        {
            self.normal_mismatch.note(adj.line, || {
                format!("{}: bone {bone}, its normal bone {nb}", what())
            });
        }
        Ok(Vertex {
            influence: Influence {
                origin: origin.unwrap_or_default(),
                weight: 1.0,
                normal: normal.unwrap_or_default(),
                bone,
            },
            uv: uv.unwrap_or_default(),
            // Out of range (reported): what writers give a vertex without a colour.
            color: color.unwrap_or(WHITE),
        })
    }
}

/// Each item's bone from an `mtxv` or `mtxn` line: one count per bone, adding up to the items.
fn bones_of(
    runs: Option<&Runs>,
    items: usize,
    bone_count: u32,
    key: &str,
    of: &str,
) -> Result<Option<Vec<u32>>> {
    let Some(runs) = runs else {
        return Ok(None);
    };
    if runs.counts.len() as u64 != u64::from(bone_count) {
        return Err(Error::malformed(format!(
            "`{key}` holds {} counts, one per bone, and `matrices:` says {bone_count} bones",
            runs.counts.len()
        ))
        .on_line(runs.line));
    }
    let sum = runs.counts.iter().fold(0u64, |a, &c| a.saturating_add(c));
    if sum != items as u64 {
        return Err(Error::malformed(format!(
            "`{key}` counts add up to {sum}, the file has {items} {of}"
        ))
        .on_line(runs.line));
    }
    let mut bones = Vec::with_capacity(items);
    for (b, &c) in (0u32..).zip(&runs.counts) {
        // Each count is at most `items`, which is a length.
        bones.extend(std::iter::repeat_n(b, usize::try_from(c).unwrap_or(0)));
    }
    Ok(Some(bones))
}

/// The triangles of a primitive, as the module's documentation says, given to `emit`.
fn triangles(prim: &Prim, indices: &[i64], mut emit: impl FnMut([i64; 3])) {
    let end = prim.first.saturating_add(prim.count);
    let corners = indices.get(prim.first..end).unwrap_or_default();
    if prim.shape == Shape::Triangle {
        if let &[a, b, c] = corners {
            emit([a, b, c]);
        }
        return;
    }
    let mut flip = prim.shape == Shape::FlippedStrip;
    for window in corners.windows(3) {
        if let &[a, b, c] = window
            && a != b
            && b != c
            && a != c
        {
            emit(if flip { [b, a, c] } else { [a, b, c] });
        }
        flip = !flip;
    }
}

/// A run of `count` items from `*at`, which moves past it; None when it does not fit `len`.
fn take(at: &mut usize, count: u64, len: usize) -> Option<Range<usize>> {
    let start = *at;
    let end = start.checked_add(usize::try_from(count).ok()?)?;
    if end > len {
        return None;
    }
    *at = end;
    Some(start..end)
}

pub(super) fn build(raw: Raw<'_>, ck: &mut Checker) -> Result<ModelParts> {
    let Raw {
        header,
        version_line,
        positions,
        normals,
        colors,
        tex1,
        tex2,
        materials,
        adjs,
        prims,
        indices,
        packets,
        loose,
        mtxv,
        mtxn,
        unknown,
        end_line,
    } = raw;
    let get = |k: Key| header.get(k as usize).copied().flatten();
    let Some(matrices) = get(Key::Matrices) else {
        return Err(Error::malformed(
            "the header has no `matrices:` line, which gives the bone count",
        )
        .on_line(version_line));
    };
    let bone_count = u32::try_from(matrices.value)
        .ok()
        .filter(|&b| b > 0)
        .ok_or_else(|| {
            Error::malformed(format!(
                "matrices: {}: the mesh needs 1 to {} bones",
                matrices.value,
                u32::MAX
            ))
            .on_line(matrices.line)
        })?;

    let mut missing = Tally::default();
    let mut differ = Tally::default();
    for (key, held) in [
        (Key::Verts, positions.len() as u64),
        (Key::Normals, normals.len() as u64),
        (Key::Colors, colors.len() as u64),
        (Key::Tex1s, tex1.len() as u64),
        (Key::Tex2s, tex2),
        (Key::Materials, materials.len() as u64),
        (Key::Adjuncts, adjs.len() as u64),
        (Key::Primitives, prims.len() as u64),
    ] {
        match get(key) {
            None => missing.note(version_line, || key.name().to_owned()),
            Some(c) if c.value != held => differ.note(c.line, || {
                format!("`{} {}`, and the file has {held}", key.name(), c.value)
            }),
            Some(_) => {}
        }
    }
    missing.report(ck, |count, first| {
        format!(
            "the header lacks {} (the first: `{first}`)",
            amount(count, "count", "counts")
        )
    })?;
    differ.report(ck, |count, first| {
        format!(
            "{} the records that follow (the first: {first})",
            amount(
                count,
                "header count differs from",
                "header counts differ from"
            )
        )
    })?;
    unknown.report(ck, |count, first| {
        format!(
            "{} starting with a word that the format does not know, skipped (the first: \
             `{first}`)",
            amount(count, "line", "lines")
        )
    })?;

    let with_packets = materials.iter().any(|m| m.packets.is_some());
    if with_packets {
        if let Some(m) = materials.iter().find(|m| m.packets.is_none()) {
            return Err(Error::malformed(format!(
                "material `{}` has no `packets:` line, while other materials use packets",
                show(m.name)
            ))
            .on_line(m.line));
        }
        if let Some(line) = loose {
            return Err(Error::malformed(
                "an `adj` or primitive record outside a packet, in a file whose materials use \
                 packets",
            )
            .on_line(line));
        }
    } else if let Some(p) = packets.first() {
        return Err(
            Error::malformed("a packet in a file whose materials have no `packets:` line")
                .on_line(p.line),
        );
    }

    let position_bones = bones_of(
        mtxv.as_ref(),
        positions.len(),
        bone_count,
        "mtxv",
        "positions",
    )?;
    let normal_bones = bones_of(mtxn.as_ref(), normals.len(), bone_count, "mtxn", "normals")?;
    if position_bones.is_none() && !with_packets {
        return Err(Error::malformed(
            "no `mtxv` line: without packets it is what gives each position its bone",
        )
        .on_line(end_line));
    }
    if normal_bones.is_none() {
        ck.tolerate(
            Error::malformed("no `mtxn` line (the normals' bones); normals follow their corners")
                .on_line(end_line),
        )?;
    }
    let mut tables = Tables {
        positions,
        normals,
        colors: colors.into_iter().map(color_bytes).collect(),
        tex1,
        tex2,
        position_bones,
        normal_bones,
        position_mismatch: Tally::default(),
        normal_mismatch: Tally::default(),
    };
    let geometry = Geometry {
        materials: &materials,
        adjs: &adjs,
        prims: &prims,
        indices: &indices,
        packets: &packets,
        bone_count,
    };
    let meshes = if with_packets {
        geometry.packet_meshes(&mut tables, ck)?
    } else {
        geometry.list_meshes(&mut tables, ck)?
    };
    let Tables {
        position_mismatch,
        normal_mismatch,
        ..
    } = tables;
    position_mismatch.report(ck, |count, first| {
        format!(
            "{} another bone by their packet than their position's by `mtxv` (the first: \
             {first}); the packet's bone is used",
            amount(count, "corner follows", "corners follow")
        )
    })?;
    normal_mismatch.report(ck, |count, first| {
        format!(
            "{} a normal that `mtxn` gives another bone (the first: {first}); normals turn \
             with their corner's bone",
            amount(count, "corner has", "corners have")
        )
    })?;

    let mut parts = ModelParts::new(Format::Mm2Mod);
    parts.meshes = meshes;
    parts.up_axis = 1;
    parts.handedness = 1;
    parts.unbound = Some(BoneSlots::ByIndex(bone_count));
    Ok(parts)
}

/// The records that make the meshes.
struct Geometry<'r, 'a> {
    materials: &'r [Material<'a>],
    adjs: &'r [Adj],
    prims: &'r [Prim],
    indices: &'r [i64],
    packets: &'r [Packet],
    bone_count: u32,
}

/// One mesh as it is built.
struct MeshBuilder {
    influences: Vec<Influence>,
    uvs: Vec<[f32; 2]>,
    colors: Vec<[u8; 4]>,
    indices: Vec<u32>,
}

impl MeshBuilder {
    /// A mesh of `vertices` vertices: their lists are made at their size, as charged.
    fn with_capacity(vertices: usize) -> MeshBuilder {
        MeshBuilder {
            influences: Vec::with_capacity(vertices),
            uvs: Vec::with_capacity(vertices),
            colors: Vec::with_capacity(vertices),
            indices: Vec::new(),
        }
    }

    fn push(&mut self, vertex: Vertex) {
        self.influences.push(vertex.influence);
        self.uvs.push(vertex.uv);
        self.colors.push(vertex.color);
    }

    /// The mesh of `material`; `textured` and `coloured` say whether the file has `t1` and `c`
    /// records, without which its vertices have no uvs or colours.
    fn finish(self, material: &Material<'_>, textured: bool, coloured: bool) -> Result<MeshParts> {
        let count = u32::try_from(self.influences.len()).map_err(|_| {
            Error::limit("more vertices in one mesh than 32 bits count").on_line(material.line)
        })?;
        // Made at its size, as charged (a collect through Result would grow it).
        let influence_start: Vec<u32> = (0..=count).collect();
        Ok(MeshParts {
            name: Name::new(material.name),
            shader: Name::new(material.texture.unwrap_or(material.name)),
            influence_start,
            influences: self.influences,
            indices: self.indices,
            texcoords: textured.then_some(self.uvs),
            colors: coloured.then_some(self.colors),
            group_ids: None,
            references: None,
            ..MeshParts::default()
        })
    }
}

impl Geometry<'_, '_> {
    /// The sum of the materials' `field` counts must be `len` (the records found).
    fn runs_add_up(
        &self,
        field: impl Fn(&Material<'_>) -> Option<Counted>,
        key: &str,
        len: usize,
        of: &str,
    ) -> Result<()> {
        let sum = self
            .materials
            .iter()
            .filter_map(&field)
            .fold(0u64, |a, c| a.saturating_add(c.value));
        if sum != len as u64 {
            let line = self
                .materials
                .iter()
                .rev()
                .find_map(&field)
                .map_or(0, |c| c.line);
            return Err(Error::malformed(format!(
                "the materials' `{key}` counts add up to {sum}, and the file has {len} {of}"
            ))
            .on_line(line));
        }
        Ok(())
    }

    /// Meshes from one `adj` list and one primitive list, cut into runs by the materials.
    fn list_meshes(&self, tables: &mut Tables, ck: &mut Checker) -> Result<Vec<MeshParts>> {
        for m in self.materials {
            if m.primitives.is_none() {
                return Err(Error::malformed(format!(
                    "material `{}` has no `primitives:` line, which says which primitives are its",
                    show(m.name)
                ))
                .on_line(m.line));
            }
        }
        // Version 1.06 materials give no adjunct counts; later ones all do.
        let counted = self.materials.iter().any(|m| m.adjuncts.is_some());
        if counted && let Some(m) = self.materials.iter().find(|m| m.adjuncts.is_none()) {
            return Err(Error::malformed(format!(
                "material `{}` has no `adjuncts:` line, while other materials have one",
                show(m.name)
            ))
            .on_line(m.line));
        }
        self.runs_add_up(
            |m| m.primitives,
            "primitives:",
            self.prims.len(),
            "primitives",
        )?;
        if counted {
            self.runs_add_up(
                |m| m.adjuncts,
                "adjuncts:",
                self.adjs.len(),
                "`adj` records",
            )?;
        }
        let (textured, coloured) = (!tables.tex1.is_empty(), !tables.colors.is_empty());
        let mut prim_at = 0usize;
        let mut adj_at = 0usize;
        let mut meshes = Vec::with_capacity(self.materials.len());
        for (k, m) in self.materials.iter().enumerate() {
            let count = |c: Option<Counted>| c.map_or(0, |c| c.value);
            // Both fit: their sums were checked against the lists.
            let prim_range =
                take(&mut prim_at, count(m.primitives), self.prims.len()).unwrap_or_default();
            let own = if counted {
                take(&mut adj_at, count(m.adjuncts), self.adjs.len())
            } else {
                None
            };
            let all = 0..self.adjs.len();
            let allowed = own.clone().unwrap_or(all);
            let mut corners: Vec<[usize; 3]> = Vec::new();
            for prim in self.prims.get(prim_range).unwrap_or_default() {
                let mut bad = None;
                triangles(prim, self.indices, |tri| {
                    let fit = tri.map(|i| usize::try_from(i).ok().filter(|i| allowed.contains(i)));
                    match fit {
                        [Some(a), Some(b), Some(c)] => corners.push([a, b, c]),
                        _ => {
                            bad.get_or_insert_with(|| {
                                tri.into_iter()
                                    .find(|&i| {
                                        usize::try_from(i).map_or(true, |i| !allowed.contains(&i))
                                    })
                                    .unwrap_or(-1)
                            });
                        }
                    }
                });
                if let Some(i) = bad {
                    let whose = match &own {
                        Some(r) => format!("material {k}'s adjuncts {}..{}", r.start, r.end),
                        None => format!("the {} `adj` records", self.adjs.len()),
                    };
                    ck.problem(
                        Error::malformed(format!(
                            "material `{}`: a primitive's corner {i} is not one of {whose}",
                            show(m.name)
                        ))
                        .on_line(prim.line),
                    )?;
                }
            }
            // The mesh's vertices: its run of corners, or (1.06) the corners it uses.
            let used: Vec<usize> = match own {
                Some(r) => r.collect(),
                None => {
                    let mut u: Vec<usize> = corners.iter().flatten().copied().collect();
                    u.sort_unstable();
                    u.dedup();
                    u
                }
            };
            let mut mesh = MeshBuilder::with_capacity(used.len());
            for &g in &used {
                let Some(adj) = self.adjs.get(g) else {
                    continue;
                };
                let what = || format!("`adj` record {g}");
                mesh.push(tables.vertex(adj, None, &what, ck)?);
            }
            mesh.indices = corners
                .iter()
                .flatten()
                .map(|g| {
                    let local = used.binary_search(g).unwrap_or(0);
                    u32::try_from(local).unwrap_or(0)
                })
                .collect();
            meshes.push(mesh.finish(m, textured, coloured)?);
        }
        Ok(meshes)
    }

    /// Meshes from packets: each material takes the next `packets:` of them.
    fn packet_meshes(&self, tables: &mut Tables, ck: &mut Checker) -> Result<Vec<MeshParts>> {
        self.runs_add_up(|m| m.packets, "packets:", self.packets.len(), "packets")?;
        let (textured, coloured) = (!tables.tex1.is_empty(), !tables.colors.is_empty());
        let mut packet_at = 0usize;
        let mut differ = Tally::default();
        let mut meshes = Vec::with_capacity(self.materials.len());
        for m in self.materials {
            let count = m.packets.map_or(0, |c| c.value);
            let range = take(&mut packet_at, count, self.packets.len()).unwrap_or_default();
            let packets = self.packets.get(range.clone()).unwrap_or_default();
            let corners = packets
                .iter()
                .map(|p| p.adjs.len())
                .fold(0, usize::saturating_add);
            let mut mesh = MeshBuilder::with_capacity(corners);
            let mut prim_total = 0u64;
            for (p, packet) in range.zip(packets) {
                let mut bones = Vec::with_capacity(packet.mtx.len());
                for (j, &b) in packet.mtx.iter().enumerate() {
                    let bone = u32::try_from(b).ok().filter(|&b| b < self.bone_count);
                    if bone.is_none() {
                        ck.problem(
                            Error::malformed(format!(
                                "packet {p}: `mtx` entry {j} is bone {b}, out of range (the mesh \
                                 has {})",
                                amount(u64::from(self.bone_count), "bone", "bones")
                            ))
                            .on_line(packet.mtx_line),
                        )?;
                    }
                    bones.push(bone.unwrap_or(0));
                }
                let base = mesh.influences.len();
                let corners = self.adjs.get(packet.adjs.clone()).unwrap_or_default();
                for (j, adj) in corners.iter().enumerate() {
                    let what = || format!("packet {p} `adj` record {j}");
                    let [.., matrix] = adj.index;
                    let bone = pick(&bones, matrix);
                    if bone.is_none() {
                        ck.problem(
                            Error::malformed(format!(
                                "{}: matrix index {matrix} out of range (the packet's `mtx` \
                                 lists {})",
                                what(),
                                amount(bones.len() as u64, "bone", "bones")
                            ))
                            .on_line(adj.line),
                        )?;
                    }
                    mesh.push(tables.vertex(adj, Some(bone.unwrap_or(0)), &what, ck)?);
                }
                for prim in self.prims.get(packet.prims.clone()).unwrap_or_default() {
                    prim_total = prim_total.saturating_add(1);
                    let mut bad = None;
                    triangles(prim, self.indices, |tri| {
                        let fit = tri.map(|i| {
                            usize::try_from(i)
                                .ok()
                                .filter(|&i| i < corners.len())
                                .and_then(|i| u32::try_from(base.checked_add(i)?).ok())
                        });
                        match fit {
                            [Some(a), Some(b), Some(c)] => mesh.indices.extend([a, b, c]),
                            _ => {
                                bad.get_or_insert(tri);
                            }
                        }
                    });
                    if let Some(tri) = bad {
                        ck.problem(
                            Error::malformed(format!(
                                "packet {p}: a primitive's corners {tri:?} are not all among the \
                                 packet's {} `adj` records",
                                corners.len()
                            ))
                            .on_line(prim.line),
                        )?;
                    }
                }
            }
            if let Some(c) = m.primitives
                && c.value != prim_total
            {
                differ.note(c.line, || {
                    format!(
                        "material `{}` says `primitives: {}`, its packets hold {prim_total}",
                        show(m.name),
                        c.value
                    )
                });
            }
            meshes.push(mesh.finish(m, textured, coloured)?);
        }
        differ.report(ck, |count, first| {
            format!(
                "{} from their packets' ({first})",
                amount(
                    count,
                    "material's primitive count differs",
                    "materials' primitive counts differ"
                )
            )
        })?;
        Ok(meshes)
    }
}
