//! The pose_skin target: a byte picks one of a fixed set of models, the rest drives up to 32
//! calls of the C ABI with fuzzed frame blends, roots, scene times, vertex ranges, flags, strides
//! and buffer sizes. Every buffer is allocated at exactly the size the call is told, so
//! AddressSanitizer catches a write past it. Each call is checked against the Rust API given the
//! same arguments: both succeed or fail alike, and where they succeed the C outputs equal the
//! Rust ones bit for bit, in the slots the layout names and nowhere else. A failed call leaves
//! every output as it was.

use std::ffi::{CString, c_char, c_void};
use std::ptr;
use std::sync::OnceLock;

use ossa::capi::*;
use ossa::{FrameBlend, LoadOptions, Mat3x4, Model, Strided};

use crate::samples;

/// Outputs are filled with this byte before a call; what a call does not write keeps it.
const POISON: u8 = 0xA7;
const POISON_F32: f32 = f32::from_bits(u32::from_ne_bytes([POISON; 4]));
const POISON_MAT: ossa_mat3x4 = ossa_mat3x4 {
    m: [POISON_F32; 12],
};

/// The fuzzer's bytes, read front to back; past the end every byte reads as 0.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.byte(), self.byte(), self.byte(), self.byte()])
    }

    /// Mostly an index below `n`; now and then one just past it, or any u32.
    fn index(&mut self, n: usize) -> u32 {
        match self.byte() {
            255 => self.u32(),
            b if b >= 240 => n as u32 + (b - 240) as u32,
            b => (b as usize % n.max(1)) as u32,
        }
    }

    /// Mostly `n`; now and then up to 16 less or 15 more.
    fn near(&mut self, n: usize) -> usize {
        match self.byte() {
            b if b < 224 => n,
            b => (n as isize + b as isize - 240).max(0) as usize,
        }
    }

    /// A blend weight: mostly a positive fraction, sometimes zero, negative, not finite,
    /// subnormal, huge or any bits.
    fn weight(&mut self) -> f32 {
        match self.byte() {
            0 => 0.0,
            1 => -1.0,
            2 => f32::NAN,
            3 => f32::INFINITY,
            4 => f32::from_bits(1),
            5 => f32::MAX,
            6 => f32::from_bits(self.u32()),
            b => b as f32 / 64.0,
        }
    }

    /// A matrix entry: mostly a small number, sometimes not finite or any bits.
    fn number(&mut self) -> f32 {
        match self.byte() {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::from_bits(self.u32()),
            b => (b as f32 - 128.0) / 16.0,
        }
    }

    /// Seconds into a scene: mostly within a few seconds either side of its start, sometimes
    /// huge, tiny, not finite or any bits.
    fn seconds(&mut self) -> f64 {
        match self.byte() {
            0 => f64::NAN,
            1 => f64::INFINITY,
            2 => f64::NEG_INFINITY,
            3 => f64::MAX,
            4 => -1e-300,
            5 => f64::from_bits(u64::from(self.u32()) << 32 | u64::from(self.u32())),
            b => (b as f64 - 128.0) / 17.0,
        }
    }

    /// A stride in bytes: mostly a valid one (12 to 40), sometimes anything below 56.
    fn stride(&mut self) -> usize {
        match self.byte() {
            b if b < 200 => 12 + 4 * (b as usize % 8),
            b => b as usize - 200,
        }
    }
}

/// One model twice: a C handle and the Rust model, built the same way from the same bytes.
struct Pair {
    c: *mut ossa_model,
    rust: Model,
}

struct Models(Vec<Pair>);
// SAFETY: a model is immutable once loaded and safe to use from any thread (API.md); the
// handles are never freed.
unsafe impl Send for Models {}
// SAFETY: as above.
unsafe impl Sync for Models {}

fn c_options(format: ossa_format) -> ossa_load_options {
    let mut o = std::mem::MaybeUninit::<ossa_load_options>::uninit();
    // SAFETY: init writes the whole struct.
    unsafe {
        ossa_load_options_init(o.as_mut_ptr());
        let mut o = o.assume_init();
        o.format = format as u32;
        o
    }
}

fn c_check(code: u32, what: &str) {
    assert_eq!(code, 0, "{what}: {:?}", code);
}

fn c_load(bytes: &[u8], format: ossa_format) -> *mut ossa_model {
    let options = c_options(format);
    let mut out = ptr::null_mut();
    // SAFETY: the pointers are valid for the call.
    let code = unsafe {
        ossa_load_memory(
            bytes.as_ptr(),
            bytes.len(),
            &options,
            &mut out,
            ptr::null_mut(),
        )
    };
    c_check(code, "ossa_load_memory");
    out
}

/// Binds and frees the two handles bound (the binding keeps what it needs of them).
fn c_bind(meshes: *mut ossa_model, skeleton: *mut ossa_model) -> *mut ossa_model {
    let mut out = ptr::null_mut();
    // SAFETY: live handles, freed once, and a writable out-pointer.
    unsafe {
        c_check(
            ossa_model_bind(meshes, skeleton, &mut out, ptr::null_mut()),
            "ossa_model_bind",
        );
        ossa_model_free(meshes);
        ossa_model_free(skeleton);
    }
    out
}

/// The read callback of the skills' filesystem: every path is the CFP that `user` points to.
unsafe extern "C" fn read_cfp(
    user: *mut c_void,
    _path: *const c_char,
    data: *mut *const u8,
    size: *mut usize,
    token: *mut *mut c_void,
) -> u32 {
    // SAFETY: `user` is the CFP of `build`, alive for the call, and the out-pointers are ossa's.
    unsafe {
        let cfp = &*user.cast::<Vec<u8>>();
        *data = cfp.as_ptr();
        *size = cfp.len();
        *token = ptr::null_mut();
    }
    0
}

/// A tube with scenes, a static tube (one frame), a tube saved as SKM and SKP and bound, a Sims
/// mesh bound by name to the tube's CMX skeleton, and the tube with a Sims skill added.
fn build() -> Models {
    use ossa_format::*;
    let load = |bytes: &[u8], format: ossa::Format| {
        Model::load(
            bytes,
            &LoadOptions {
                format,
                ..LoadOptions::default()
            },
        )
        .expect("a sample loads")
    };
    let tube = samples::tube(3, 3, 3);
    let tube_dpm = ossa::dpm::write(&tube).expect("the tube saves as DPM");
    let static_dpm = ossa::dpm::write(&samples::tube(2, 4, 1)).expect("a static tube");
    let skm = ossa::skm::write_skm(&tube).expect("the tube saves as SKM");
    let skp = ossa::skm::write_skp(&tube).expect("the tube saves as SKP");
    let skn = ossa::sims_mesh::write_skn(&samples::sims_mesh(3)).expect("the Sims mesh saves");
    let cmx = ossa::cmx::write_cmx(&tube).expect("the tube saves as CMX");
    let skill = samples::skill_file_bytes(false);
    let cfp = samples::skill_cfp(true);

    let mut pairs = Vec::new();
    let c_tube = c_load(&tube_dpm, OSSA_FORMAT_DPM);
    let r_tube = load(&tube_dpm, ossa::Format::Dpm);
    pairs.push(Pair {
        c: c_load(&static_dpm, OSSA_FORMAT_DPM),
        rust: load(&static_dpm, ossa::Format::Dpm),
    });
    pairs.push(Pair {
        c: c_bind(c_load(&skm, OSSA_FORMAT_SKM), c_load(&skp, OSSA_FORMAT_SKP)),
        rust: Model::bind(
            &load(&skm, ossa::Format::Skm),
            &load(&skp, ossa::Format::Skp),
        )
        .expect("SKM binds to SKP"),
    });
    pairs.push(Pair {
        c: c_bind(
            c_load(&skn, OSSA_FORMAT_SIMS_SKN),
            c_load(&cmx, OSSA_FORMAT_SIMS_CMX),
        ),
        rust: Model::bind(
            &load(&skn, ossa::Format::SimsSkn),
            &load(&cmx, ossa::Format::SimsCmx),
        )
        .expect("the Sims mesh binds to the CMX skeleton"),
    });

    let name = CString::new("anims/fuzz.cmx").expect("no NUL");
    let io = ossa_file_io {
        user: ptr::from_ref(&cfp).cast_mut().cast(),
        read: Some(read_cfp),
        release: None,
    };
    let mut options = c_options(OSSA_FORMAT_AUTO);
    options.io = &io;
    options.name = name.as_ptr();
    let mut c_skilled = ptr::null_mut();
    // SAFETY: every pointer is valid for the call.
    let code = unsafe {
        ossa_model_add_skills_memory(
            c_tube,
            skill.as_ptr(),
            skill.len(),
            &options,
            &mut c_skilled,
            ptr::null_mut(),
        )
    };
    c_check(code, "ossa_model_add_skills_memory");
    let fs = samples::OneFile(cfp.clone());
    let rust_options = LoadOptions {
        io: Some(&fs),
        name: Some("anims/fuzz.cmx".to_owned()),
        ..LoadOptions::default()
    };
    let r_skilled = r_tube
        .with_skills(&skill, &rust_options)
        .expect("the skill plays");
    pairs.push(Pair {
        c: c_skilled,
        rust: r_skilled,
    });
    pairs.push(Pair {
        c: c_tube,
        rust: r_tube,
    });
    Models(pairs)
}

fn models() -> &'static [Pair] {
    static MODELS: OnceLock<Models> = OnceLock::new();
    &MODELS.get_or_init(build).0
}

/// The C result agrees with the Rust one: 0 for success, else the same error code.
#[track_caller]
fn agree<T>(code: u32, rust: &ossa::Result<T>, what: &str) {
    let want = rust.as_ref().err().map_or(0, |e| e.code() as u32);
    assert_eq!(
        code,
        want,
        "{what}: C gives {code}, Rust {rust:?}",
        rust = rust.as_ref().err()
    );
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

fn mats_to_c(m: &[Mat3x4], len: usize) -> Vec<ossa_mat3x4> {
    (0..len)
        .map(|i| m.get(i).map_or(POISON_MAT, |m| ossa_mat3x4 { m: m.m }))
        .collect()
}

fn mats_equal(c: &[ossa_mat3x4], rust: &[Mat3x4]) -> bool {
    c.len() == rust.len() && c.iter().zip(rust).all(|(a, b)| same_bits(&a.m, &b.m))
}

fn poisoned_mats(c: &[ossa_mat3x4]) -> bool {
    c.iter().all(|m| same_bits(&m.m, &POISON_MAT.m))
}

/// ossa_pose_frames (or _local) of a fuzzed blend; a model-space pose that succeeds becomes
/// the bones later calls skin with.
fn pose(p: &Pair, input: &mut Input, bones: &mut Vec<Mat3x4>, local: bool) {
    let model = &p.rust;
    let (nb, nf) = (model.bones().len(), model.frames().len());
    let count = (input.byte() % 10) as usize;
    let blends: Vec<ossa_frame_blend> = (0..count)
        .map(|_| ossa_frame_blend {
            frame: input.index(nf),
            weight: input.weight(),
        })
        .collect();
    let root = (!local && input.byte() & 1 == 1).then(|| ossa_mat3x4 {
        m: std::array::from_fn(|_| input.number()),
    });
    let bone_count = input.near(nb);
    let mut c_out = vec![POISON_MAT; bone_count];
    // SAFETY: `blends` holds `count` entries, `root` one matrix or NULL, `c_out` `bone_count`.
    let code = unsafe {
        if local {
            ossa_pose_frames_local(p.c, blends.as_ptr(), count, c_out.as_mut_ptr(), bone_count)
        } else {
            let root = root.as_ref().map_or(ptr::null(), ptr::from_ref);
            ossa_pose_frames(
                p.c,
                blends.as_ptr(),
                count,
                root,
                c_out.as_mut_ptr(),
                bone_count,
            )
        }
    };
    let rust_blends: Vec<FrameBlend> = blends
        .iter()
        .map(|b| FrameBlend {
            frame: b.frame,
            weight: b.weight,
        })
        .collect();
    let rust_root = root.map(|r| Mat3x4 { m: r.m });
    let mut out = vec![Mat3x4::IDENTITY; bone_count];
    let result = if local {
        model.pose_frames_local(&rust_blends, &mut out)
    } else {
        model.pose_frames(&rust_blends, rust_root.as_ref(), &mut out)
    };
    agree(code, &result, "pose");
    if code != 0 {
        assert!(poisoned_mats(&c_out), "a failed pose wrote its output");
        return;
    }
    assert!(mats_equal(&c_out, &out), "C and Rust poses differ");
    if !local {
        *bones = out;
    }
}

/// Where one skinned vertex goes: its byte range in a caller's buffer.
fn slots(count: usize, stride: usize, at: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..count).map(move |i| at + i * stride..at + i * stride + 12)
}

/// Fails unless every byte of `buffer` outside the `written` ranges is still poison.
fn untouched_outside(buffer: &[u8], written: impl Iterator<Item = std::ops::Range<usize>>) {
    let mut mask = vec![false; buffer.len()];
    for r in written {
        if let Some(m) = mask.get_mut(r) {
            m.fill(true);
        }
    }
    let stray = buffer
        .iter()
        .zip(&mask)
        .position(|(&b, &written)| !written && b != POISON);
    assert_eq!(stray, None, "a byte outside the vertex slots was written");
}

fn floats_at(buffer: &[u8], range: std::ops::Range<usize>) -> [f32; 3] {
    let b = buffer.get(range).expect("a slot inside the buffer");
    std::array::from_fn(|k| {
        f32::from_ne_bytes([b[4 * k], b[4 * k + 1], b[4 * k + 2], b[4 * k + 3]])
    })
}

/// Bytes for `count` vertices at `stride` by the contract, give or take what the input says;
/// never more than 64 KiB (room for a few thousand vertices), however many are asked for.
fn buffer_bytes(input: &mut Input, count: usize, stride: usize) -> usize {
    let need = if count == 0 {
        0
    } else {
        stride.saturating_mul(count - 1).saturating_add(12)
    };
    input.near(need.min(1 << 16))
}

fn fits(bytes: usize, count: usize, stride: usize) -> bool {
    stride >= 12 && stride.is_multiple_of(4) && (count == 0 || bytes >= stride * (count - 1) + 12)
}

/// ossa_skin_mesh with the current bones, or ossa_mesh_bind_vertices, of a fuzzed vertex range
/// into fuzzed buffers: positions alone, normals in a buffer of their own, or both interleaved.
fn skin(p: &Pair, input: &mut Input, bones: &[Mat3x4], bind_pose: bool) {
    let model = &p.rust;
    let nb = model.bones().len();
    let mesh = input.index(model.meshes().len());
    let vc = model
        .meshes()
        .get(mesh as usize)
        .map_or(0, |m| m.vertex_count());
    let first = input.index(vc + 1);
    let count = match input.byte() {
        b if b < 128 => vc.saturating_sub(first as usize) as u32,
        b if b < 250 => (b as usize % (vc + 1)) as u32,
        _ => input.u32(),
    };
    let flags = match input.byte() {
        b if b < 120 => 0,
        b if b < 250 => OSSA_SKIN_NORMALIZE,
        b => b as u32,
    };
    let n = count as usize;
    let layout = input.byte() % 3;
    let mut position_stride = input.stride();
    if layout == 2 {
        // Interleaved: the normal follows the position, in a slot of its own.
        position_stride = position_stride.max(24);
    }
    let position_bytes = buffer_bytes(input, n, position_stride);
    let mut positions = vec![POISON; position_bytes];
    let (mut normal_buffer, normal_stride, normal_bytes) = match layout {
        1 => {
            let stride = input.stride();
            let bytes = buffer_bytes(input, n, stride);
            (vec![POISON; bytes], stride, bytes)
        }
        2 => (
            Vec::new(),
            position_stride,
            position_bytes.saturating_sub(12),
        ),
        _ => (Vec::new(), 0, 0),
    };
    let normals_ptr: *mut f32 = match layout {
        1 => normal_buffer.as_mut_ptr().cast(),
        // SAFETY: 12 bytes in, or one past the end of an empty buffer.
        2 => unsafe { positions.as_mut_ptr().add(12.min(position_bytes)).cast() },
        _ => ptr::null_mut(),
    };
    let target = ossa_skin_target {
        positions: positions.as_mut_ptr().cast(),
        position_stride,
        position_bytes,
        normals: normals_ptr,
        normal_stride,
        normal_bytes,
    };
    let bone_count = input.near(nb);
    let c_bones = mats_to_c(bones, bone_count);
    // SAFETY: the buffers hold exactly the bytes the target states; `c_bones` holds
    // `bone_count` matrices.
    let code = unsafe {
        if bind_pose {
            ossa_mesh_bind_vertices(p.c, mesh, first, count, flags, &target)
        } else {
            ossa_skin_mesh(
                p.c,
                mesh,
                c_bones.as_ptr(),
                bone_count,
                first,
                count,
                flags,
                &target,
            )
        }
    };

    // The same call in Rust, into packed buffers of exactly the vertices asked for.
    let wants_normals = layout != 0;
    let room = n.min(vc + 1);
    let mut rust_positions = vec![0.0f32; room * 3];
    let mut rust_normals = vec![0.0f32; if wants_normals { room * 3 } else { 0 }];
    let mut rust_target = Strided::new(&mut rust_positions, 3).expect("stride 3");
    if wants_normals {
        rust_target = rust_target
            .with_normals(&mut rust_normals, 3)
            .expect("stride 3");
    }
    let rust_bones: Vec<Mat3x4> = c_bones.iter().map(|m| Mat3x4 { m: m.m }).collect();
    let (first, count) = (first as usize, count as usize);
    let result = if bind_pose {
        model.bind_vertices(mesh as usize, first, count, flags, &mut rust_target)
    } else {
        model.skin_mesh(
            mesh as usize,
            &rust_bones,
            first,
            count,
            flags,
            &mut rust_target,
        )
    };
    let target_fits = fits(position_bytes, n, position_stride)
        && (layout == 0 || fits(normal_bytes, n, normal_stride));
    if !target_fits {
        assert_ne!(
            code, 0,
            "skinning {n} vertices into a target too small for them"
        );
    } else {
        agree(code, &result, "skin");
    }
    if code != 0 {
        assert!(
            positions.iter().all(|&b| b == POISON),
            "a failed skin wrote positions"
        );
        assert!(
            normal_buffer.iter().all(|&b| b == POISON),
            "a failed skin wrote normals"
        );
        return;
    }
    for (i, r) in slots(n, position_stride, 0).enumerate() {
        let want = &rust_positions[3 * i..3 * i + 3];
        assert!(
            same_bits(&floats_at(&positions, r), want),
            "vertex {i}: positions differ"
        );
    }
    match layout {
        0 => untouched_outside(&positions, slots(n, position_stride, 0)),
        1 => {
            untouched_outside(&positions, slots(n, position_stride, 0));
            untouched_outside(&normal_buffer, slots(n, normal_stride, 0));
            for (i, r) in slots(n, normal_stride, 0).enumerate() {
                let want = &rust_normals[3 * i..3 * i + 3];
                assert!(
                    same_bits(&floats_at(&normal_buffer, r), want),
                    "vertex {i}: normals differ"
                );
            }
        }
        _ => {
            let both = slots(n, position_stride, 0).chain(slots(n, position_stride, 12));
            untouched_outside(&positions, both);
            for (i, r) in slots(n, position_stride, 12).enumerate() {
                let want = &rust_normals[3 * i..3 * i + 3];
                assert!(
                    same_bits(&floats_at(&positions, r), want),
                    "vertex {i}: normals differ"
                );
            }
        }
    }
}

/// ossa_animation_blend of a fuzzed scene and time: one or two frames of the scene with
/// positive weights summing to 1, which then pose.
fn animation(p: &Pair, input: &mut Input, bones: &mut Vec<Mat3x4>) {
    let model = &p.rust;
    let scene = input.index(model.animations().len());
    let seconds = input.seconds();
    let poison = ossa_frame_blend {
        frame: u32::from_ne_bytes([POISON; 4]),
        weight: POISON_F32,
    };
    let mut c_blends = [poison; 2];
    let mut c_count = usize::MAX;
    // SAFETY: two writable blends and a writable count.
    let code =
        unsafe { ossa_animation_blend(p.c, scene, seconds, c_blends.as_mut_ptr(), &mut c_count) };
    let result = model.animation_blend(scene as usize, seconds);
    agree(code, &result, "animation blend");
    let Ok((blends, n)) = result else {
        assert_eq!(c_count, usize::MAX, "a failed blend wrote its count");
        assert!(
            c_blends.iter().all(|b| b.frame == poison.frame),
            "a failed blend wrote blends"
        );
        return;
    };
    assert_eq!(c_count, n);
    assert!(n == 1 || n == 2, "{n} blends");
    let a = &model.animations()[scene as usize];
    let frames = a.first_frame..a.first_frame + a.frame_count;
    let mut total = 0.0;
    for (c, b) in c_blends.iter().zip(&blends).take(n) {
        assert_eq!((c.frame, c.weight.to_bits()), (b.frame, b.weight.to_bits()));
        assert!(
            frames.contains(&b.frame),
            "{seconds} s into scene {scene} {a:?}: {b:?}"
        );
        assert!(b.weight.is_finite() && b.weight > 0.0, "{seconds} s: {b:?}");
        total += b.weight;
    }
    assert!(
        (total - 1.0).abs() < 1e-5,
        "{seconds} s: weights sum to {total}"
    );
    let mut out = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(&blends[..n], None, &mut out)
        .expect("a scene's blend poses");
    *bones = out;
}

/// ossa_mesh_gpu_weights of a fuzzed mesh, influences per vertex and capacity.
fn gpu_weights(p: &Pair, input: &mut Input) {
    let model = &p.rust;
    let mesh = input.index(model.meshes().len());
    let vc = model
        .meshes()
        .get(mesh as usize)
        .map_or(0, |m| m.vertex_count());
    let per_vertex = u32::from(input.byte() % 10);
    let capacity = input.near(vc * per_vertex as usize);
    let mut c_bones = vec![u16::from_ne_bytes([POISON; 2]); capacity];
    let mut c_weights = vec![POISON_F32; capacity];
    let mut c_dropped = u32::from_ne_bytes([POISON; 4]);
    // SAFETY: both buffers hold `capacity` entries.
    let code = unsafe {
        ossa_mesh_gpu_weights(
            p.c,
            mesh,
            per_vertex,
            c_bones.as_mut_ptr(),
            c_weights.as_mut_ptr(),
            capacity,
            &mut c_dropped,
        )
    };
    let mut bones = vec![0u16; capacity];
    let mut weights = vec![0.0f32; capacity];
    let result = model.gpu_weights(mesh as usize, per_vertex as usize, &mut bones, &mut weights);
    agree(code, &result, "gpu weights");
    let Ok(dropped) = result else {
        assert!(
            c_bones
                .iter()
                .all(|&b| b == u16::from_ne_bytes([POISON; 2]))
        );
        assert!(
            c_weights
                .iter()
                .all(|w| w.to_bits() == POISON_F32.to_bits())
        );
        assert_eq!(c_dropped, u32::from_ne_bytes([POISON; 4]));
        return;
    };
    assert_eq!(c_dropped as usize, dropped);
    let want = vc * per_vertex as usize;
    assert_eq!(c_bones[..want], bones[..want]);
    assert!(same_bits(&c_weights[..want], &weights[..want]));
    let nb = model.bones().len();
    assert!(bones[..want].iter().all(|&b| (b as usize) < nb.max(1)));
    assert!(
        weights[..want]
            .iter()
            .all(|w| w.is_finite() && (0.0..=1.0).contains(w))
    );
}

/// ossa_skinning_matrices of the current bones, or ossa_model_inverse_bind.
fn matrices(p: &Pair, input: &mut Input, bones: &[Mat3x4]) {
    let model = &p.rust;
    let bone_count = input.near(model.bones().len());
    let inverse = input.byte() & 1 == 1;
    let c_in = mats_to_c(bones, bone_count);
    let mut c_out = vec![POISON_MAT; bone_count];
    let mut out = vec![Mat3x4::IDENTITY; bone_count];
    // SAFETY: both buffers hold `bone_count` matrices.
    let (code, result) = unsafe {
        if inverse {
            let code = ossa_model_inverse_bind(p.c, c_out.as_mut_ptr(), bone_count);
            (code, model.inverse_bind(&mut out))
        } else {
            let code = ossa_skinning_matrices(p.c, c_in.as_ptr(), c_out.as_mut_ptr(), bone_count);
            let rust_in: Vec<Mat3x4> = c_in.iter().map(|m| Mat3x4 { m: m.m }).collect();
            (code, model.skinning_matrices(&rust_in, &mut out))
        }
    };
    agree(code, &result, "matrices");
    if code == 0 {
        assert!(mats_equal(&c_out, &out), "C and Rust matrices differ");
    } else {
        assert!(poisoned_mats(&c_out), "a failed call wrote its output");
    }
}

/// The target: a model chosen by the first byte, then calls until the input runs out.
pub fn run(data: &[u8]) {
    let models = models();
    let mut input = Input(data);
    let pair = &models[input.byte() as usize % models.len()];
    let mut bones = pair.rust.skeleton().bind_pose().to_vec();
    for _ in 0..32 {
        if input.0.is_empty() {
            break;
        }
        match input.byte() % 7 {
            0 => pose(pair, &mut input, &mut bones, false),
            1 => pose(pair, &mut input, &mut bones, true),
            2 => skin(pair, &mut input, &bones, false),
            3 => skin(pair, &mut input, &bones, true),
            4 => animation(pair, &mut input, &mut bones),
            5 => gpu_weights(pair, &mut input),
            _ => matrices(pair, &mut input, &bones),
        }
    }
}
