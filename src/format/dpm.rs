//! DarkPlaces DPM: big-endian, hierarchical skeletal poses as 3x4 matrices.
//!
//! Layout (offsets from the start of the file): an 80-byte header; `num_bones` 40-byte bones;
//! `num_meshs` 56-byte mesh headers; `num_frames` 68-byte frame headers; per mesh a sequential
//! vertex block (`u32 numbones` then that many 32-byte influences), texcoords, indices and
//! group ids; per frame `num_bones` 48-byte parent-relative poses. Every offset and size is
//! checked against the buffer, and no two structures may share bytes, so that what is allocated
//! is bounded by the file's size.

use byteorder::BigEndian;

use crate::cursor::{record_at, span, table_bytes, u32_at};
use crate::error::{Error, Result, ResultExt};
use crate::format::binary::{
    Part, Regions, VertexBlock, Vertices, decode_append, decode_few, guess_blocks, header_start,
    measure_vertices, name_field, nonfinite, put_f32, put_name, put_u32, put_vertices, put_zeros,
    read_bone, read_guessing_first, read_sound_vertices, read_texcoords, read_triangles,
    read_vertices, read_words, records_len, table, vertex_bytes,
};
use crate::format::{Checker, Format, total};
use crate::math::Mat3x4;
use crate::model::{Animation, Bone, Extent, Frame, Influence, MeshParts, Model, ModelParts, Name};

type Be = BigEndian;

pub const MAGIC: &[u8; 16] = b"DARKPLACESMODEL\0";
const TYPE: u32 = 2;
const HEADER_SIZE: u64 = 80;
const BONE_SIZE: u64 = 40;
const MESH_SIZE: u64 = 56;
const FRAME_SIZE: u64 = 68;
const POSE_SIZE: u64 = 48;
const NAME_SIZE: usize = 32;
/// Bytes of the bounds the header and each frame hold.
const EXTENT_SIZE: usize = 32;
/// Where a frame record's pose offset lies: after its name and bounds.
const FRAME_OFS_POSES: usize = NAME_SIZE + EXTENT_SIZE;

// Heap what the file holds takes in the model's parts, for the memory limit, beside each
// influence and pose (and what the model makes of the parts, Model::assembly_parts).
/// A name of a 32-byte field without a NUL in its first bytes is held on the heap, with one.
const NAME_HEAP: u64 = NAME_SIZE as u64 + 1;
/// A vertex: where its influences start, its texcoord.
const VERTEX_COST: u64 = 4 + 8;
/// A triangle: three indices and a group id.
const TRIANGLE_COST: u64 = 3 * 4 + 4;
/// A frame: its layout and the frame made of it (made apart, held together at the most), its
/// scene, and their names.
const FRAME_COST: u64 =
    (size_of::<FrameLayout>() + size_of::<Frame>() + size_of::<Animation>()) as u64 + 2 * NAME_HEAP;
/// A bone, and its name.
const BONE_COST: u64 = size_of::<Bone>() as u64 + NAME_HEAP;
/// A mesh's layout, with its shader's name, which its parts take over.
const MESH_COST: u64 = size_of::<MeshLayout>() as u64 + NAME_HEAP;

/// DarkPlaces plays a frame without a scene file as a scene of its own at this rate.
const DEFAULT_FPS: f32 = 10.0;

struct Header {
    extent: Extent,
    num_bones: u32,
    num_meshes: u32,
    num_frames: u32,
    ofs_bones: u32,
    ofs_meshes: u32,
    ofs_frames: u32,
}

struct MeshLayout {
    shader: Name,
    num_verts: u32,
    num_tris: u32,
    ofs_verts: u32,
    ofs_texcoords: u32,
    ofs_indices: u32,
    ofs_groupids: u32,
    vertices: VertexBlock,
}

struct Layout {
    bones: Vec<Bone>,
    meshes: Vec<MeshLayout>,
    frames: Vec<FrameLayout>,
    regions: Regions,
}

struct FrameLayout {
    frame: Frame,
    ofs_poses: u32,
}

/// Bounds as the header and every frame store them: mins, maxs, yaw radius and radius, eight
/// floats at `at`. A NaN or an infinity is a problem at its byte; 0 stands in when validating.
fn read_extent(
    bytes: &[u8],
    at: u64,
    ck: &mut Checker,
    what: impl Fn() -> String,
) -> Result<Extent> {
    let mut v = [0.0f32; 8];
    // Eight words: decoded in place, cheaper than a call into the bulk decoder.
    if decode_few::<Be, f32>(bytes, &mut v) {
        for (i, x) in v.iter_mut().enumerate() {
            if !x.is_finite() {
                ck.problem(
                    Error::malformed(format!("{}: {x} is not a finite number", what()))
                        .at(record_at(at, i, 4)),
                )?;
                *x = 0.0;
            }
        }
    }
    let [x0, y0, z0, x1, y1, z1, yaw_radius, radius] = v;
    Ok(Extent {
        mins: [x0, y0, z0],
        maxs: [x1, y1, z1],
        yaw_radius,
        radius,
    })
}

fn read_header(data: &[u8], ck: &mut Checker) -> Result<Header> {
    let mut c = header_start::<Be>(data, MAGIC, "a DPM file", HEADER_SIZE)?;
    let filesize_at = c.pos();
    let filesize = c.u32()?;
    if filesize as u64 != data.len() as u64 {
        ck.tolerate(
            Error::malformed(format!(
                "header: filesize says {filesize} bytes, the data has {}",
                data.len()
            ))
            .at(filesize_at),
        )?;
    }
    let extent_at = c.pos();
    let extent = read_extent(c.bytes(EXTENT_SIZE)?, extent_at, ck, || {
        "header: bounds".to_owned()
    })?;
    let counts_at = c.pos();
    let h = Header {
        extent,
        num_bones: c.u32()?,
        num_meshes: c.u32()?,
        num_frames: c.u32()?,
        ofs_bones: c.u32()?,
        ofs_meshes: c.u32()?,
        ofs_frames: c.u32()?,
    };
    if h.num_bones == 0 {
        ck.problem(Error::malformed("header: the model has no bones").at(counts_at))?;
    }
    if h.num_frames == 0 {
        ck.problem(
            Error::malformed("header: the model has no frames (frame 0 is the bind pose)")
                .at(record_at(counts_at, 2, 4)),
        )?;
    }
    Ok(h)
}

/// Pass one: the layout of every structure, without allocating for their contents.
/// With `measure`, every vertex block is measured and in the regions; without, each holds only
/// its offset and vertex count, for [`guess_blocks`].
fn read_layout(data: &[u8], h: &Header, measure: bool, ck: &mut Checker) -> Result<Layout> {
    let mut regions = Regions::default();
    regions.add(0, HEADER_SIZE, Part::Header);

    let bone_bytes = table(data, h.ofs_bones, h.num_bones, BONE_SIZE, Part::Bones)?;
    let mesh_bytes = table(data, h.ofs_meshes, h.num_meshes, MESH_SIZE, Part::Meshes)?;
    let frame_bytes = table(data, h.ofs_frames, h.num_frames, FRAME_SIZE, Part::Frames)?;
    regions.add(h.ofs_bones as u64, bone_bytes.len() as u64, Part::Bones);
    regions.add(h.ofs_meshes as u64, mesh_bytes.len() as u64, Part::Meshes);
    regions.add(h.ofs_frames as u64, frame_bytes.len() as u64, Part::Frames);
    // The tables are inside the file, so these counts are bounded by its size.
    let mut bones = Vec::with_capacity(h.num_bones as usize);
    for (i, rec) in bone_bytes.as_chunks::<40>().0.iter().enumerate() {
        let at = record_at(h.ofs_bones.into(), i, BONE_SIZE);
        bones.push(read_bone::<Be>(rec, NAME_SIZE, i, at, ck)?);
    }

    let mut meshes = Vec::with_capacity(h.num_meshes as usize);
    for (m, rec) in mesh_bytes.as_chunks::<56>().0.iter().enumerate() {
        let mi = m as u32;
        let at = record_at(h.ofs_meshes.into(), m, MESH_SIZE);
        let mut l = MeshLayout {
            shader: name_field(rec, NAME_SIZE, at, ck, || format!("mesh {m} shader"))?,
            num_verts: u32_at::<Be>(rec, 32),
            num_tris: u32_at::<Be>(rec, 36),
            ofs_verts: u32_at::<Be>(rec, 40),
            ofs_texcoords: u32_at::<Be>(rec, 44),
            ofs_indices: u32_at::<Be>(rec, 48),
            ofs_groupids: u32_at::<Be>(rec, 52),
            vertices: VertexBlock::default(),
        };
        l.vertices.offset = l.ofs_verts;
        l.vertices.num_verts = l.num_verts;
        let at_mesh = |e: Error| e.within(format!("mesh {m} (header at byte {at:#x})"));
        let tc =
            table(data, l.ofs_texcoords, l.num_verts, 8, Part::Texcoords(mi)).map_err(at_mesh)?;
        let ix = table(data, l.ofs_indices, l.num_tris, 12, Part::Indices(mi)).map_err(at_mesh)?;
        let gi = table(data, l.ofs_groupids, l.num_tris, 4, Part::GroupIds(mi)).map_err(at_mesh)?;
        if measure {
            l.vertices =
                measure_vertices::<Be>(data, l.ofs_verts, l.num_verts, m).map_err(at_mesh)?;
            // In the order of the dpmodel tool's files, so that the overlap check's sort finds
            // them sorted.
            regions.add(l.ofs_verts as u64, l.vertices.len, Part::Vertices(mi));
        }
        regions.add(l.ofs_texcoords as u64, tc.len() as u64, Part::Texcoords(mi));
        regions.add(l.ofs_indices as u64, ix.len() as u64, Part::Indices(mi));
        regions.add(l.ofs_groupids as u64, gi.len() as u64, Part::GroupIds(mi));
        meshes.push(l);
    }

    let pose_bytes = table_bytes(h.num_bones.into(), POSE_SIZE)?;
    let mut frames = Vec::with_capacity(h.num_frames as usize);
    for (f, rec) in frame_bytes.as_chunks::<68>().0.iter().enumerate() {
        let at = record_at(h.ofs_frames.into(), f, FRAME_SIZE);
        let name = name_field(rec, NAME_SIZE, at, ck, || format!("frame {f}"))?;
        let bounds = rec.get(NAME_SIZE..FRAME_OFS_POSES).unwrap_or_default();
        let extent = read_extent(bounds, record_at(at, NAME_SIZE, 1), ck, || {
            format!("frame {f} ({name}): bounds")
        })?;
        let ofs_at = record_at(at, FRAME_OFS_POSES, 1);
        let ofs = u32_at::<Be>(rec, FRAME_OFS_POSES) as i32;
        let Ok(ofs) = u32::try_from(ofs) else {
            return Err(Error::malformed(format!(
                "frame {f} ({name}): pose offset {ofs} is negative"
            ))
            .at(ofs_at));
        };
        span(ofs.into(), pose_bytes, data.len()).within(|| {
            format!(
                "frame {f} ({name}) poses ({} bones of 48 bytes)",
                h.num_bones
            )
        })?;
        regions.add_poses(f as u32, ofs.into(), pose_bytes);
        frames.push(FrameLayout {
            frame: Frame {
                name,
                mins: extent.mins,
                maxs: extent.maxs,
                yaw_radius: extent.yaw_radius,
                radius: extent.radius,
            },
            ofs_poses: ofs,
        });
    }
    Ok(Layout {
        bones,
        meshes,
        frames,
        regions,
    })
}

/// Every frame's poses, frame-major. A pose with a NaN or an infinity is a problem at its byte;
/// the identity stands in when validating.
fn read_poses(
    data: &[u8],
    frames: &[FrameLayout],
    num_bones: u32,
    ck: &mut Checker,
) -> Result<(Vec<Mat3x4>, [f32; 12])> {
    let nb = num_bones as usize;
    // Each element's largest magnitude over every pose, found while decoding.
    let mut largest = [0u32; 12];
    let frame_bytes = (num_bones as usize).saturating_mul(POSE_SIZE as usize);
    // Each frame's poses lie inside the file, apart from every other structure: the
    // allocation is bounded by the file's size.
    let mut poses = Vec::with_capacity(frames.len().saturating_mul(nb));
    let mut rest = frames;
    let mut first = 0usize;
    while let Some(head) = rest.first() {
        // Frames whose poses follow one another in the file (as the tools write them) are
        // decoded in one pass: a call per frame cost as much as the decoding on long animations.
        let from = head.ofs_poses as usize;
        let follows = rest
            .windows(2)
            .take_while(|w| {
                w.first()
                    .map(|a| (a.ofs_poses as usize).saturating_add(frame_bytes))
                    == w.get(1).map(|b| b.ofs_poses as usize)
            })
            .count();
        let (group, after) = rest.split_at(follows.saturating_add(1).min(rest.len()));
        rest = after;
        // Every frame's table was checked against the file when its header was read, so the
        // run's bytes are inside it.
        let last = first.saturating_add(group.len()).saturating_sub(1);
        let len = group.len().saturating_mul(frame_bytes);
        let (start, end) = span(from as u64, len as u64, data.len())
            .within(|| Part::Poses(first as u32, last as u32))?;
        let bytes = data.get(start..end).unwrap_or_default();
        let start = poses.len();
        let most = decode_append::<Be, f32, 12>(bytes, group.len().saturating_mul(nb), &mut poses);
        for (l, m) in largest.iter_mut().zip(most) {
            *l = (*l).max(m);
        }
        if nonfinite(&most) {
            let decoded = poses.get_mut(start..).unwrap_or_default();
            for (k, (fl, out)) in group.iter().zip(decoded.chunks_mut(nb.max(1))).enumerate() {
                replace_nonfinite(first.saturating_add(k), fl, out, ck)?;
            }
        }
        first = first.saturating_add(group.len());
    }
    let poses = poses.into_iter().map(|m| Mat3x4 { m }).collect();
    Ok((poses, largest.map(f32::from_bits)))
}

/// Reports each pose of frame `f` (`out`, decoded from `fl`'s table) that holds a NaN or an
/// infinity, at its byte, and puts the identity in its place.
fn replace_nonfinite(
    f: usize,
    fl: &FrameLayout,
    out: &mut [[f32; 12]],
    ck: &mut Checker,
) -> Result<()> {
    for (b, m) in out.iter_mut().enumerate() {
        if let Some(k) = m.iter().position(|v| !v.is_finite()) {
            ck.problem(
                Error::malformed(format!(
                    "frame {f} ({}) bone {b}: pose element {k} is {}, not a finite number",
                    fl.frame.name,
                    m.get(k).copied().unwrap_or_default()
                ))
                .at(record_at(
                    record_at(fl.ofs_poses.into(), b, POSE_SIZE),
                    k,
                    4,
                )),
            )?;
            *m = Mat3x4::IDENTITY.m;
        }
    }
    Ok(())
}

fn read_mesh(
    data: &[u8],
    m: usize,
    l: MeshLayout,
    sound: Option<Vertices>,
    num_bones: u32,
    ck: &mut Checker,
) -> Result<MeshParts> {
    let (influence_start, influences) =
        read_vertices::<Be>(data, &l.vertices, sound, num_bones, m, ck)?;
    let texcoords = read_texcoords::<Be>(data, l.ofs_texcoords, l.num_verts, m, ck)?;
    // DPM's front faces are already counter-clockwise.
    let indices = read_triangles::<Be>(data, l.ofs_indices, l.num_tris, l.num_verts, false, m, ck)?;
    let group_ids = read_words::<Be>(data, l.ofs_groupids, l.num_tris, Part::GroupIds(m as u32))?;

    Ok(MeshParts {
        name: Name::empty(),
        shader: l.shader,
        influence_start,
        influences,
        indices,
        texcoords: Some(texcoords),
        group_ids: Some(group_ids),
        references: None,
        ..MeshParts::default()
    })
}

/// Reads a DPM file (see [`read_guessing_first`]).
pub(crate) fn read(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    read_guessing_first(ck, |measure, ck| read_as(data, measure, ck))
}

/// Reads a DPM file with its vertex blocks measured, or guessed (None when a guess fails).
fn read_as(data: &[u8], measure: bool, ck: &mut Checker) -> Result<Option<ModelParts>> {
    let h = read_header(data, ck)?;
    let Layout {
        bones,
        meshes: mut layouts,
        frames: frame_layouts,
        mut regions,
    } = read_layout(data, &h, measure, ck)?;
    if !measure {
        let mut blocks: Vec<_> = layouts.iter_mut().map(|l| &mut l.vertices).collect();
        if guess_blocks(data.len(), &mut blocks, &mut regions).is_none() {
            return Ok(None);
        }
    }
    regions.check_disjoint()?;

    let influences = total(layouts.iter().map(|l| l.vertices.influences));
    let verts = total(layouts.iter().map(|l| l.num_verts.into()));
    let tris = total(layouts.iter().map(|l| l.num_tris.into()));
    let (num_frames, num_bones) = (u64::from(h.num_frames), u64::from(h.num_bones));
    let meshes = layouts.len() as u64;
    let [bone, frame, mesh, vertex, influence] =
        Model::assembly_parts(num_bones, num_frames, meshes, verts, influences);
    ck.reserve_parts(
        &[
            (influences, size_of::<Influence>() as u64),
            (verts, VERTEX_COST),
            (tris, TRIANGLE_COST),
            // Two u32s: the product is exact.
            (
                num_frames.saturating_mul(num_bones),
                size_of::<Mat3x4>() as u64,
            ),
            (num_frames, FRAME_COST),
            (num_bones, BONE_COST),
            (meshes, MESH_COST),
            bone,
            frame,
            mesh,
            vertex,
            influence,
        ],
        "the model",
    )?;

    // Guessed blocks are all read before anything is reported about the meshes: a refuted
    // guess leaves nothing to take back.
    let mut sound = Vec::new().into_iter();
    if !measure {
        let read = |l: &MeshLayout| read_sound_vertices::<Be>(data, &l.vertices, h.num_bones);
        match layouts.iter().map(read).collect::<Option<Vec<_>>>() {
            Some(v) => sound = v.into_iter(),
            None => return Ok(None),
        }
    }
    let mut meshes = Vec::with_capacity(layouts.len());
    for (m, l) in layouts.into_iter().enumerate() {
        meshes.push(read_mesh(data, m, l, sound.next(), h.num_bones, ck)?);
    }
    let (poses, pose_magnitudes) = read_poses(data, &frame_layouts, h.num_bones, ck)?;
    let frames: Vec<Frame> = frame_layouts.into_iter().map(|f| f.frame).collect();
    let animations = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Animation {
            name: f.name.clone(),
            first_frame: i as u32,
            frame_count: 1,
            fps: DEFAULT_FPS,
            looping: true,
            ..Animation::default()
        })
        .collect();
    Ok(Some(ModelParts {
        format: Format::Dpm,
        bones,
        frames,
        poses: poses.into(),
        pose_magnitudes: Some(pose_magnitudes),
        animations,
        meshes,
        up_axis: 2,
        handedness: 1,
        extent: Some(h.extent),
        unbound: None,
        warnings: Vec::new(),
        ..ModelParts::new(Format::Dpm)
    }))
}

fn to_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v)
        .map_err(|_| Error::limit(format!("{what}: {v} does not fit a DPM's 32-bit fields")))
}

/// The whole model's bounds when no file declared them: the union of the frames' bounds and the
/// bind pose's. The radii of corners are taken in f64, as their squares may pass a float; a
/// radius that does not fit one is `Limit` (a DPM reader refuses infinite bounds).
fn computed_extent(model: &Model) -> Result<Extent> {
    let (mut mins, mut maxs) = model.bounds();
    let mut yaw_radius = 0.0f32;
    let mut radius = 0.0f32;
    for f in model.frames() {
        for (m, v) in mins.iter_mut().zip(f.mins) {
            *m = m.min(v);
        }
        for (m, v) in maxs.iter_mut().zip(f.maxs) {
            *m = m.max(v);
        }
        yaw_radius = yaw_radius.max(f.yaw_radius);
        radius = radius.max(f.radius);
    }
    for c in [mins, maxs] {
        let [x, y, z] = c.map(f64::from);
        yaw_radius = yaw_radius.max(x.hypot(y) as f32);
        radius = radius.max((x * x + y * y + z * z).sqrt() as f32);
    }
    if !(yaw_radius.is_finite() && radius.is_finite()) {
        return Err(Error::limit(format!(
            "the model's bounds reach {mins:?} to {maxs:?}, whose radius is past a float"
        )));
    }
    Ok(Extent {
        mins,
        maxs,
        yaw_radius,
        radius,
    })
}

/// Writes a model as DPM, in the order the dpmodel tool does: header, bones, mesh headers,
/// frame headers, then each mesh's vertices, texcoords, indices and group ids, then each
/// frame's poses.
pub fn write(model: &Model) -> Result<Vec<u8>> {
    let bones = model.bones();
    let frames = model.frames();
    let meshes = model.meshes();
    if bones.is_empty() || frames.is_empty() {
        return Err(Error::invalid_argument(
            "a DPM needs at least one bone and one frame",
        ));
    }
    // Sizes saturate while planning; the file size check below refuses any that did.
    let frame_poses = records_len(bones.len(), POSE_SIZE);
    let ofs_bones = HEADER_SIZE;
    let ofs_meshes = ofs_bones.saturating_add(records_len(bones.len(), BONE_SIZE));
    let ofs_frames = ofs_meshes.saturating_add(records_len(meshes.len(), MESH_SIZE));
    let mut pos = ofs_frames.saturating_add(records_len(frames.len(), FRAME_SIZE));
    let mut mesh_offsets = Vec::with_capacity(meshes.len());
    for mesh in meshes {
        let verts = pos;
        let texcoords = verts.saturating_add(vertex_bytes(mesh));
        let indices = texcoords.saturating_add(records_len(mesh.vertex_count(), 8));
        let groupids = indices.saturating_add(records_len(mesh.triangle_count(), 12));
        pos = groupids.saturating_add(records_len(mesh.triangle_count(), 4));
        mesh_offsets.push([verts, texcoords, indices, groupids]);
    }
    let ofs_poses = pos;
    let filesize = ofs_poses.saturating_add(frame_poses.saturating_mul(frames.len() as u64));
    let filesize = to_u32(usize::try_from(filesize).unwrap_or(usize::MAX), "file size")?;

    let extent = match model.declared_extent() {
        Some(e) => *e,
        None => computed_extent(model)?,
    };
    let mut out = Vec::with_capacity(filesize as usize);
    out.extend_from_slice(MAGIC);
    put_u32::<Be>(&mut out, TYPE);
    put_u32::<Be>(&mut out, filesize);
    for v in extent.mins.iter().chain(&extent.maxs) {
        put_f32::<Be>(&mut out, *v);
    }
    put_f32::<Be>(&mut out, extent.yaw_radius);
    put_f32::<Be>(&mut out, extent.radius);
    put_u32::<Be>(&mut out, to_u32(bones.len(), "bone count")?);
    put_u32::<Be>(&mut out, to_u32(meshes.len(), "mesh count")?);
    put_u32::<Be>(&mut out, to_u32(frames.len(), "frame count")?);
    for ofs in [ofs_bones, ofs_meshes, ofs_frames] {
        put_u32::<Be>(&mut out, ofs as u32);
    }
    for (i, b) in bones.iter().enumerate() {
        put_name(&mut out, &b.name, NAME_SIZE, NAME_SIZE, || {
            format!("bone {i}")
        })?;
        out.extend_from_slice(&b.parent.to_be_bytes());
        put_u32::<Be>(&mut out, b.flags);
    }
    for (m, (mesh, ofs)) in meshes.iter().zip(&mesh_offsets).enumerate() {
        put_name(&mut out, mesh.shader(), NAME_SIZE, NAME_SIZE, || {
            format!("mesh {m} shader")
        })?;
        put_u32::<Be>(&mut out, mesh.vertex_count() as u32);
        put_u32::<Be>(&mut out, mesh.triangle_count() as u32);
        for o in ofs {
            put_u32::<Be>(&mut out, *o as u32);
        }
    }
    for (f, frame) in frames.iter().enumerate() {
        put_name(&mut out, &frame.name, NAME_SIZE, NAME_SIZE, || {
            format!("frame {f}")
        })?;
        for v in frame.mins.iter().chain(&frame.maxs) {
            put_f32::<Be>(&mut out, *v);
        }
        put_f32::<Be>(&mut out, frame.yaw_radius);
        put_f32::<Be>(&mut out, frame.radius);
        // The pose offset is the one signed field of the format.
        let at = ofs_poses.saturating_add(frame_poses.saturating_mul(f as u64));
        let at = i32::try_from(at).map_err(|_| {
            Error::limit(format!(
                "frame {f}: pose offset {at} does not fit DPM's signed 32-bit field"
            ))
        })?;
        out.extend_from_slice(&at.to_be_bytes());
    }
    for mesh in meshes {
        put_vertices::<Be>(&mut out, mesh);
        match mesh.texcoords() {
            Some(tc) => tc
                .iter()
                .flatten()
                .for_each(|v| put_f32::<Be>(&mut out, *v)),
            None => put_zeros(&mut out, mesh.vertex_count().saturating_mul(8)),
        }
        mesh.indices()
            .iter()
            .for_each(|&i| put_u32::<Be>(&mut out, i));
        match mesh.group_ids() {
            Some(g) => g.iter().for_each(|&i| put_u32::<Be>(&mut out, i)),
            None => put_zeros(&mut out, mesh.triangle_count().saturating_mul(4)),
        }
    }
    for f in 0..frames.len() {
        for pose in model.skeleton().frame_poses(f).unwrap_or_default().iter() {
            pose.m.iter().for_each(|v| put_f32::<Be>(&mut out, *v));
        }
    }
    debug_assert_eq!(out.len(), filesize as usize);
    Ok(out)
}
