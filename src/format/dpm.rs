//! DarkPlaces DPM: big-endian, hierarchical skeletal poses as 3x4 matrices.
//!
//! Layout (offsets from the start of the file): an 80-byte header; `num_bones` 40-byte bones;
//! `num_meshs` 56-byte mesh headers; `num_frames` 68-byte frame headers; per mesh a sequential
//! vertex block (`u32 numbones` then that many 32-byte influences), texcoords, indices and
//! group ids; per frame `num_bones` 48-byte parent-relative poses. Every offset and size is
//! checked against the buffer, and no two structures may share bytes, so that what is allocated
//! is bounded by the file's size.

use byteorder::{BigEndian, ByteOrder};

use crate::cursor::{Cursor, span, u32_at};
use crate::error::{Error, Result, ResultExt};
use crate::format::binary::{
    Part, Regions, measure_vertices, name_field, put_f32, put_name, put_u32, put_vertices,
    read_bone, read_texcoords, read_triangles, read_vertices, table, vertex_bytes,
};
use crate::format::{Checker, Format};
use crate::math::Mat3x4;
use crate::model::{Animation, Bone, Extent, Frame, MeshParts, Model, ModelParts, Name};

type Be = BigEndian;

pub const MAGIC: &[u8; 16] = b"DARKPLACESMODEL\0";
const TYPE: u32 = 2;
const HEADER_SIZE: u64 = 80;
const BONE_SIZE: u64 = 40;
const MESH_SIZE: u64 = 56;
const FRAME_SIZE: u64 = 68;
const POSE_SIZE: u64 = 48;
const NAME_SIZE: usize = 32;

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
    influence_count: u64,
}

struct Layout {
    bones: Vec<Bone>,
    meshes: Vec<MeshLayout>,
    frames: Vec<FrameLayout>,
    regions: Regions,
}

struct FrameLayout {
    frame: Frame,
    ofs_poses: u64,
}

/// Reads a float, reporting NaN or infinity as a problem at its byte (0 stands in when validating).
fn finite(c: &mut Cursor<'_, Be>, ck: &mut Checker, what: impl FnOnce() -> String) -> Result<f32> {
    let at = c.pos();
    let v = c.f32_raw()?;
    if v.is_finite() {
        return Ok(v);
    }
    ck.problem(Error::malformed(format!("{}: {v} is not a finite number", what())).at(at))?;
    Ok(0.0)
}

fn vec3(c: &mut Cursor<'_, Be>, ck: &mut Checker, what: impl Fn() -> String) -> Result<[f32; 3]> {
    Ok([
        finite(c, ck, &what)?,
        finite(c, ck, &what)?,
        finite(c, ck, &what)?,
    ])
}

fn read_header(data: &[u8], ck: &mut Checker) -> Result<Header> {
    let id_len = data.len().min(MAGIC.len());
    if data.get(..id_len) != MAGIC.get(..id_len) {
        return Err(Error::unknown_format(
            "header: id is not \"DARKPLACESMODEL\" (not a DPM file)",
        )
        .at(0));
    }
    let mut c = Cursor::<Be>::at(data, 0)?;
    c.require(HEADER_SIZE).within(|| "header")?;
    c.skip(16)?;
    let type_at = c.pos();
    let ty = c.u32()?;
    if ty != TYPE {
        return Err(Error::unsupported(format!(
            "header: type {ty} (only type 2, hierarchical skeletal pose, exists)"
        ))
        .at(type_at));
    }
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
    let what = || "header: bounds".to_owned();
    let extent = Extent {
        mins: vec3(&mut c, ck, what)?,
        maxs: vec3(&mut c, ck, what)?,
        yaw_radius: finite(&mut c, ck, what)?,
        radius: finite(&mut c, ck, what)?,
    };
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
                .at(counts_at + 8),
        )?;
    }
    Ok(h)
}

/// Pass one: the layout of every structure, without allocating for their contents.
fn read_layout(data: &[u8], h: &Header, ck: &mut Checker) -> Result<Layout> {
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
        let at = h.ofs_bones as u64 + i as u64 * BONE_SIZE;
        bones.push(read_bone::<Be>(rec, NAME_SIZE, i, at, ck)?);
    }

    let mut meshes = Vec::with_capacity(h.num_meshes as usize);
    for (m, rec) in mesh_bytes.as_chunks::<56>().0.iter().enumerate() {
        let mi = m as u32;
        let at = h.ofs_meshes as u64 + m as u64 * MESH_SIZE;
        let mut l = MeshLayout {
            shader: name_field(rec, NAME_SIZE, at, ck, || format!("mesh {m} shader"))?,
            num_verts: u32_at::<Be>(rec, 32),
            num_tris: u32_at::<Be>(rec, 36),
            ofs_verts: u32_at::<Be>(rec, 40),
            ofs_texcoords: u32_at::<Be>(rec, 44),
            ofs_indices: u32_at::<Be>(rec, 48),
            ofs_groupids: u32_at::<Be>(rec, 52),
            influence_count: 0,
        };
        let at_mesh = |e: Error| e.within(format!("mesh {m} (header at byte {at:#x})"));
        let tc =
            table(data, l.ofs_texcoords, l.num_verts, 8, Part::Texcoords(mi)).map_err(at_mesh)?;
        let ix = table(data, l.ofs_indices, l.num_tris, 12, Part::Indices(mi)).map_err(at_mesh)?;
        let gi = table(data, l.ofs_groupids, l.num_tris, 4, Part::GroupIds(mi)).map_err(at_mesh)?;
        let (vertex_bytes, influence_count) =
            measure_vertices::<Be>(data, l.ofs_verts, l.num_verts, m).map_err(at_mesh)?;
        l.influence_count = influence_count;
        regions.add(l.ofs_texcoords as u64, tc.len() as u64, Part::Texcoords(mi));
        regions.add(l.ofs_indices as u64, ix.len() as u64, Part::Indices(mi));
        regions.add(l.ofs_groupids as u64, gi.len() as u64, Part::GroupIds(mi));
        regions.add(l.ofs_verts as u64, vertex_bytes, Part::Vertices(mi));
        meshes.push(l);
    }

    let pose_bytes = h.num_bones as u64 * POSE_SIZE;
    let mut frames = Vec::with_capacity(h.num_frames as usize);
    for (f, rec) in frame_bytes.as_chunks::<68>().0.iter().enumerate() {
        let at = h.ofs_frames as u64 + f as u64 * FRAME_SIZE;
        let name = name_field(rec, NAME_SIZE, at, ck, || format!("frame {f}"))?;
        let mut c = Cursor::<Be>::at(data, at + 32)?;
        let what = || format!("frame {f} ({name}): bounds");
        let mins = vec3(&mut c, ck, what)?;
        let maxs = vec3(&mut c, ck, what)?;
        let yaw_radius = finite(&mut c, ck, what)?;
        let radius = finite(&mut c, ck, what)?;
        let ofs = c.i32()?;
        if ofs < 0 {
            return Err(Error::malformed(format!(
                "frame {f} ({name}): pose offset {ofs} is negative"
            ))
            .at(at + 64));
        }
        span(ofs as u64, pose_bytes, data.len()).within(|| {
            format!(
                "frame {f} ({name}) poses ({} bones of 48 bytes)",
                h.num_bones
            )
        })?;
        regions.add(ofs as u64, pose_bytes, Part::Poses(f as u32));
        frames.push(FrameLayout {
            frame: Frame {
                name,
                mins,
                maxs,
                yaw_radius,
                radius,
            },
            ofs_poses: ofs as u64,
        });
    }
    Ok(Layout {
        bones,
        meshes,
        frames,
        regions,
    })
}

fn read_poses(
    data: &[u8],
    frames: &[FrameLayout],
    num_bones: u32,
    ck: &mut Checker,
) -> Result<Vec<Mat3x4>> {
    let mut poses = Vec::with_capacity(frames.len() * num_bones as usize);
    for (f, fl) in frames.iter().enumerate() {
        let bytes = table(
            data,
            fl.ofs_poses as u32,
            num_bones,
            POSE_SIZE,
            Part::Poses(f as u32),
        )?;
        for (b, rec) in bytes.as_chunks::<48>().0.iter().enumerate() {
            let mut m = [0.0f32; 12];
            Be::read_f32_into(rec, &mut m);
            if let Some(k) = m.iter().position(|v| !v.is_finite()) {
                ck.problem(
                    Error::malformed(format!(
                        "frame {f} ({}) bone {b}: pose element {k} is {}, not a finite number",
                        fl.frame.name,
                        m.get(k).copied().unwrap_or_default()
                    ))
                    .at(fl.ofs_poses + b as u64 * POSE_SIZE + k as u64 * 4),
                )?;
                m = Mat3x4::IDENTITY.m;
            }
            poses.push(Mat3x4 { m });
        }
    }
    Ok(poses)
}

fn read_mesh(
    data: &[u8],
    m: usize,
    l: &MeshLayout,
    num_bones: u32,
    ck: &mut Checker,
) -> Result<MeshParts> {
    let (influence_start, influences) = read_vertices::<Be>(
        data,
        l.ofs_verts,
        l.num_verts,
        l.influence_count,
        num_bones,
        m,
        ck,
    )?;
    let texcoords = read_texcoords::<Be>(data, l.ofs_texcoords, l.num_verts, m, ck)?;
    // DPM's front faces are already counter-clockwise.
    let indices = read_triangles::<Be>(data, l.ofs_indices, l.num_tris, l.num_verts, false, m, ck)?;
    let gi = table(
        data,
        l.ofs_groupids,
        l.num_tris,
        4,
        Part::GroupIds(m as u32),
    )?;
    let group_ids = gi
        .as_chunks::<4>()
        .0
        .iter()
        .map(|w| Be::read_u32(w))
        .collect();

    Ok(MeshParts {
        name: Name::empty(),
        shader: l.shader.clone(),
        influence_start,
        influences,
        indices,
        texcoords: Some(texcoords),
        group_ids: Some(group_ids),
        references: None,
        ..MeshParts::default()
    })
}

/// Reads a DPM file.
pub(crate) fn read(data: &[u8], ck: &mut Checker) -> Result<ModelParts> {
    let h = read_header(data, ck)?;
    let Layout {
        bones,
        meshes: layouts,
        frames: frame_layouts,
        regions,
    } = read_layout(data, &h, ck)?;
    regions.check_disjoint()?;

    let influences: u64 = layouts.iter().map(|l| l.influence_count).sum();
    let verts: u64 = layouts.iter().map(|l| l.num_verts as u64).sum();
    let tris: u64 = layouts.iter().map(|l| l.num_tris as u64).sum();
    let static_rest = if h.num_frames == 1 { verts * 24 } else { 0 };
    let estimate = influences * 32
        + verts * (4 + 8)
        + tris * 16
        + static_rest
        + h.num_frames as u64 * (h.num_bones as u64 * 48 + 96)
        + h.num_bones as u64 * 160;
    ck.reserve(estimate, "the model")?;

    let mut meshes = Vec::with_capacity(layouts.len());
    for (m, l) in layouts.iter().enumerate() {
        meshes.push(read_mesh(data, m, l, h.num_bones, ck)?);
    }
    let poses = read_poses(data, &frame_layouts, h.num_bones, ck)?;
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
        })
        .collect();
    Ok(ModelParts {
        format: Format::Dpm,
        bones,
        frames,
        poses,
        animations,
        meshes,
        up_axis: 2,
        handedness: 1,
        extent: Some(h.extent),
        unbound: None,
        warnings: Vec::new(),
        ..ModelParts::new(Format::Dpm)
    })
}

fn to_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v)
        .map_err(|_| Error::limit(format!("{what}: {v} does not fit a DPM's 32-bit fields")))
}

/// The whole model's bounds when no file declared them: the union of the frames' bounds and the
/// bind pose's.
fn computed_extent(model: &Model) -> Extent {
    let (mut mins, mut maxs) = model.bounds();
    let mut yaw_radius = 0.0f32;
    let mut radius = 0.0f32;
    for f in model.frames() {
        for a in 0..3 {
            mins[a] = mins[a].min(f.mins[a]);
            maxs[a] = maxs[a].max(f.maxs[a]);
        }
        yaw_radius = yaw_radius.max(f.yaw_radius);
        radius = radius.max(f.radius);
    }
    for c in [mins, maxs] {
        yaw_radius = yaw_radius.max(c[0].hypot(c[1]));
        radius = radius.max((c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt());
    }
    Extent {
        mins,
        maxs,
        yaw_radius,
        radius,
    }
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
    let nb = bones.len() as u64;
    let ofs_bones = HEADER_SIZE;
    let ofs_meshes = ofs_bones + nb * BONE_SIZE;
    let ofs_frames = ofs_meshes + meshes.len() as u64 * MESH_SIZE;
    let mut pos = ofs_frames + frames.len() as u64 * FRAME_SIZE;
    let mut mesh_offsets = Vec::with_capacity(meshes.len());
    for mesh in meshes {
        let verts = pos;
        let vbytes = vertex_bytes(mesh);
        let texcoords = verts + vbytes;
        let indices = texcoords + mesh.vertex_count() as u64 * 8;
        let groupids = indices + mesh.triangle_count() as u64 * 12;
        pos = groupids + mesh.triangle_count() as u64 * 4;
        mesh_offsets.push([verts, texcoords, indices, groupids]);
    }
    let ofs_poses = pos;
    let filesize = ofs_poses + frames.len() as u64 * nb * POSE_SIZE;
    let filesize = to_u32(usize::try_from(filesize).unwrap_or(usize::MAX), "file size")?;

    let extent = model
        .declared_extent()
        .copied()
        .unwrap_or_else(|| computed_extent(model));
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
        let at = ofs_poses + f as u64 * nb * POSE_SIZE;
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
            None => out.resize(out.len() + mesh.vertex_count() * 8, 0),
        }
        mesh.indices()
            .iter()
            .for_each(|&i| put_u32::<Be>(&mut out, i));
        match mesh.group_ids() {
            Some(g) => g.iter().for_each(|&i| put_u32::<Be>(&mut out, i)),
            None => out.resize(out.len() + mesh.triangle_count() * 4, 0),
        }
    }
    for f in 0..frames.len() {
        for pose in model.skeleton().frame_poses(f).unwrap_or_default() {
            pose.m.iter().for_each(|v| put_f32::<Be>(&mut out, *v));
        }
    }
    debug_assert_eq!(out.len(), filesize as usize);
    Ok(out)
}
