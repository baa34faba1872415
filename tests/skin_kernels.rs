//! Every skinning kernel this CPU runs against the portable one, on corpus models and rigs built
//! here, over ranges, target layouts and flags; and the portable kernel (with its palette of
//! blended matrices) against the stored formula evaluated in f64.
//!
//! SSE2 does the portable kernel's operations in its order: its output must be the same bits.
//! AVX2 fuses each multiply and add into one rounding: each output float is a chain of at most
//! four products (or, for the blended matrices, the weights times `pose * inverse bind`, then
//! four products), and dropping a product's rounding moves the result by at most half an ulp of
//! that product, so AVX2 may differ by a few ulp of the largest term. The test allows 4 ulp of
//! the output's scale (its largest coordinate, 1 for normals) and reports the largest seen
//! (1.5 on the corpus). AVX-512 does AVX2's operations in AVX2's order, sixteen vertices at a
//! time: its output must be AVX2's bits, and is compared with the portable kernel's as AVX2's
//! is. Where the CPU lacks a kernel, the tests say so and check the others.

use ossa::synth::TubeRig;
use ossa::{
    FrameBlend, Influence, Interleaved, Kernel, LoadOptions, Mat3x4, MeshParts, Model, ModelParts,
    Name, SKIN_NORMALIZE, SkinTarget, Strided,
};

#[path = "corpus/mod.rs"]
mod corpus;

/// Floats outside the elements a call may write hold this, so that a stray store shows.
const SENTINEL: f32 = -12345.5;
/// Floats after the end of a target's slice, checked for overruns.
const TAIL: usize = 8;

/// Where a target puts an element's position and normal, in floats.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// Separate buffers with these strides; no normals when `normal_stride` is 0.
    Strided {
        position_stride: usize,
        normal_stride: usize,
    },
    Interleaved {
        stride: usize,
        position_at: usize,
        normal_at: Option<usize>,
    },
}

/// Packed positions and normals (stored four and eight at a time), side by side in 24-byte
/// elements either way round (likewise), and strides the kernels store element by element.
const LAYOUTS: [Layout; 9] = [
    Layout::Strided {
        position_stride: 3,
        normal_stride: 3,
    },
    Layout::Strided {
        position_stride: 3,
        normal_stride: 4,
    },
    Layout::Interleaved {
        stride: 6,
        position_at: 3,
        normal_at: Some(0),
    },
    Layout::Strided {
        position_stride: 4,
        normal_stride: 4,
    },
    Layout::Strided {
        position_stride: 6,
        normal_stride: 0,
    },
    Layout::Strided {
        position_stride: 8,
        normal_stride: 8,
    },
    Layout::Interleaved {
        stride: 6,
        position_at: 0,
        normal_at: Some(3),
    },
    Layout::Interleaved {
        stride: 8,
        position_at: 4,
        normal_at: Some(0),
    },
    Layout::Interleaved {
        stride: 8,
        position_at: 1,
        normal_at: None,
    },
];

/// The buffers of one call: exactly the room `count` elements need, then `TAIL` more floats.
struct Output {
    a: Vec<f32>,
    b: Vec<f32>,
    /// Floats of `a` and `b` the target is given.
    a_len: usize,
    b_len: usize,
}

fn room(count: usize, stride: usize, at: usize) -> usize {
    if count == 0 {
        0
    } else {
        (count - 1) * stride + at + 3
    }
}

/// Skins vertices `[first, first + count)` of `mesh` with `kernel` into `layout`.
#[allow(clippy::too_many_arguments)]
fn skin_into(
    model: &Model,
    kernel: Kernel,
    mesh: usize,
    bones: &[Mat3x4],
    first: usize,
    count: usize,
    flags: u32,
    layout: Layout,
) -> Output {
    let (a_len, b_len) = match layout {
        Layout::Strided {
            position_stride,
            normal_stride,
        } => (
            room(count, position_stride, 0),
            if normal_stride > 0 {
                room(count, normal_stride, 0)
            } else {
                0
            },
        ),
        Layout::Interleaved {
            stride,
            position_at,
            normal_at,
        } => (
            room(count, stride, position_at.max(normal_at.unwrap_or(0))),
            0,
        ),
    };
    let mut out = Output {
        a: vec![SENTINEL; a_len + TAIL],
        b: vec![SENTINEL; b_len + TAIL],
        a_len,
        b_len,
    };
    let result = match layout {
        Layout::Strided {
            position_stride,
            normal_stride,
        } => {
            let t = Strided::new(&mut out.a[..a_len], position_stride).unwrap();
            let mut t = if normal_stride > 0 {
                t.with_normals(&mut out.b[..b_len], normal_stride).unwrap()
            } else {
                t
            };
            model.skin_mesh_with(kernel, mesh, bones, first, count, flags, &mut t)
        }
        Layout::Interleaved {
            stride,
            position_at,
            normal_at,
        } => {
            let mut t =
                Interleaved::new(&mut out.a[..a_len], stride, position_at, normal_at).unwrap();
            model.skin_mesh_with(kernel, mesh, bones, first, count, flags, &mut t)
        }
    };
    result.unwrap_or_else(|e| panic!("{kernel:?} {layout:?} {first}+{count}: {e}"));
    out
}

/// Which floats of an output are written: (is written, is a normal).
fn written(layout: Layout, len: usize, second: bool) -> Vec<(bool, bool)> {
    let mut w = vec![(false, false); len];
    let mut mark = |stride: usize, at: usize, normal: bool| {
        let mut i = 0;
        while i * stride + at + 3 <= len {
            for k in 0..3 {
                w[i * stride + at + k] = (true, normal);
            }
            i += 1;
        }
    };
    match layout {
        Layout::Strided {
            position_stride,
            normal_stride,
        } => {
            if second {
                if normal_stride > 0 {
                    mark(normal_stride, 0, true);
                }
            } else {
                mark(position_stride, 0, false);
            }
        }
        Layout::Interleaved {
            stride,
            position_at,
            normal_at,
        } => {
            if !second {
                mark(stride, position_at, false);
                if let Some(n) = normal_at {
                    mark(stride, n, true);
                }
            }
        }
    }
    w
}

/// The largest coordinate of a posed model's vertices: the scale its positions' rounding has.
fn position_scale(model: &Model, bones: &[Mat3x4]) -> f32 {
    let mut scale = 1e-6f32;
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut p = vec![0.0; n * 3];
        let mut t = Strided::new(&mut p, 3).unwrap();
        model
            .skin_mesh_with(Kernel::Portable, m, bones, 0, n, 0, &mut t)
            .unwrap();
        scale = p.iter().fold(scale, |s, x| s.max(x.abs()));
    }
    scale
}

/// Compares a kernel's output with the portable one's; returns the largest difference in ulp
/// of the scale (0 for a bit-identical kernel, which must be).
fn compare(
    kernel: Kernel,
    reference: &Output,
    got: &Output,
    layout: Layout,
    scale: f32,
    what: &str,
) -> f64 {
    let mut worst = 0.0f64;
    for (second, r, g, len) in [
        (false, &reference.a, &got.a, reference.a_len),
        (true, &reference.b, &got.b, reference.b_len),
    ] {
        let w = written(layout, len, second);
        for (i, (&x, &y)) in r.iter().zip(g).enumerate() {
            let (is_written, is_normal) = w.get(i).copied().unwrap_or((false, false));
            if !is_written || kernel == Kernel::Sse2 || kernel == Kernel::Simd128 {
                assert_eq!(
                    x.to_bits(),
                    y.to_bits(),
                    "{what}: {kernel:?} float {i} of buffer {} ({} vs {}; written {is_written})",
                    second as u8,
                    x,
                    y
                );
                if !is_written {
                    assert_eq!(
                        x, SENTINEL,
                        "{what}: float {i} outside the elements changed"
                    );
                }
                continue;
            }
            let s = if is_normal { 1.0 } else { scale };
            let ulp = f64::from(s) * f64::from(f32::EPSILON);
            let d = f64::from((x - y).abs()) / ulp;
            assert!(
                d <= 4.0,
                "{what}: {kernel:?} float {i} is {y}, portable {x}: {d:.1} ulp of {s}"
            );
            worst = worst.max(d);
        }
    }
    worst
}

/// Ranges that cover the odd cases: empty, single, odd counts at odd offsets, and halves.
fn ranges(n: usize) -> Vec<(usize, usize)> {
    let mut r = vec![(0, n), (0, 0), (n, 0)];
    for (first, count) in [(0, 1), (1, 3), (2, 5), (3, 7), (5, 1)] {
        if first + count <= n {
            r.push((first, count));
        }
    }
    if n > 0 {
        r.extend([(n - 1, 1), (n / 3, n / 3), (n / 2, n - n / 2), (0, n / 2)]);
    }
    r
}

fn two_frame_pose(model: &Model) -> Vec<Mat3x4> {
    let last = model.frames().len().saturating_sub(1).min(1) as u32;
    let blend = [
        FrameBlend {
            frame: 0,
            weight: 0.4,
        },
        FrameBlend {
            frame: last,
            weight: 0.6,
        },
    ];
    // A root that rotates and moves the model, so that even a one-frame model is not in its
    // bind pose and no matrix is the identity.
    let root = Mat3x4::from_rotation_translation(
        glam::Quat::from_axis_angle(glam::Vec3::new(0.3, -0.5, 0.8).normalize(), 0.7),
        [1.5, -2.25, 3.0],
    );
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model.pose_frames(&blend, Some(&root), &mut bones).unwrap();
    bones
}

/// Says which kernels this CPU lacks, which the tests cannot check here.
fn report_missing_kernels(test: &str) {
    for k in Kernel::ALL.into_iter().filter(|k| !k.is_available()) {
        eprintln!(
            "{test}: the {} kernel skipped, this CPU (or compiler) lacks it",
            k.name()
        );
    }
}

/// Every available kernel against the portable one, and AVX-512 against AVX2 bit for bit: all
/// layouts and flags over the odd ranges; returns the largest AVX2 (and AVX-512) difference in
/// ulp.
fn check_kernels(name: &str, model: &Model, layouts: &[Layout]) -> f64 {
    let bones = two_frame_pose(model);
    let scale = position_scale(model, &bones);
    let mut worst = 0.0f64;
    for kernel in Kernel::available().filter(|&k| k != Kernel::Portable) {
        for (m, mesh) in model.meshes().iter().enumerate() {
            for &layout in layouts {
                for flags in [0, SKIN_NORMALIZE] {
                    for (first, count) in ranges(mesh.vertex_count()) {
                        let what =
                            format!("{name} mesh {m} {layout:?} flags {flags} {first}+{count}");
                        let run = |k| skin_into(model, k, m, &bones, first, count, flags, layout);
                        let got = run(kernel);
                        let d = compare(kernel, &run(Kernel::Portable), &got, layout, scale, &what);
                        worst = worst.max(d);
                        if kernel == Kernel::Avx512 {
                            let avx2 = run(Kernel::Avx2);
                            let bits =
                                |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                            assert!(
                                bits(&got.a) == bits(&avx2.a) && bits(&got.b) == bits(&avx2.b),
                                "{what}: AVX-512 differs from AVX2"
                            );
                        }
                    }
                }
            }
        }
    }
    worst
}

/// Skinning a mesh in two ranges split anywhere gives the same bits as one call, with every
/// kernel (what two threads would each write).
fn check_splits(name: &str, model: &Model, splits: impl Fn(usize) -> Vec<usize>) {
    let bones = two_frame_pose(model);
    let layout = LAYOUTS[0];
    // Packed streams: with unit normals element by element, without four or eight at a time.
    for (kernel, flags) in Kernel::available().flat_map(|k| [(k, SKIN_NORMALIZE), (k, 0)]) {
        for (m, mesh) in model.meshes().iter().enumerate() {
            let n = mesh.vertex_count();
            let whole = skin_into(model, kernel, m, &bones, 0, n, flags, layout);
            for s in splits(n) {
                let low = skin_into(model, kernel, m, &bones, 0, s, flags, layout);
                let high = skin_into(model, kernel, m, &bones, s, n - s, flags, layout);
                let joined: Vec<u32> = low.a[..low.a_len]
                    .iter()
                    .chain(&high.a[..high.a_len])
                    .chain(&low.b[..low.b_len])
                    .chain(&high.b[..high.b_len])
                    .map(|x| x.to_bits())
                    .collect();
                let one: Vec<u32> = whole.a[..whole.a_len]
                    .iter()
                    .chain(&whole.b[..whole.b_len])
                    .map(|x| x.to_bits())
                    .collect();
                assert!(
                    joined == one,
                    "{name} mesh {m}: {kernel:?} (flags {flags}) split at {s} differs"
                );
            }
        }
    }
}

/// The stored formula `p = sum_k (R_k o_k + f_k t_k)`, `n = sum_k R_k n_k` in f64.
fn direct_f64(infl: &[Influence], bones: &[Mat3x4]) -> ([f64; 3], [f64; 3]) {
    let mut p = [0.0f64; 3];
    let mut n = [0.0f64; 3];
    for i in infl {
        let m = bones[i.bone as usize].m.map(f64::from);
        for r in 0..3 {
            let row = &m[4 * r..4 * r + 4];
            p[r] += row[0] * f64::from(i.origin[0])
                + row[1] * f64::from(i.origin[1])
                + row[2] * f64::from(i.origin[2])
                + row[3] * f64::from(i.weight);
            n[r] += row[0] * f64::from(i.normal[0])
                + row[1] * f64::from(i.normal[1])
                + row[2] * f64::from(i.normal[2]);
        }
    }
    (p, n)
}

/// The portable kernel (palette included) gives the stored formula to within 2e-6 of the
/// model's scale for positions and 2e-5 for normals: the palette's tolerances (1e-6 of the size,
/// 1e-5 of the normals' length, which for a vertex's few influences sum to about 1) plus
/// rounding. Returns the largest position difference over the scale.
fn check_exact(name: &str, model: &Model) -> f64 {
    let bones = two_frame_pose(model);
    let scale = position_scale(model, &bones);
    let mut worst = 0.0f64;
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut p = vec![0.0f32; n * 3];
        let mut q = vec![0.0f32; n * 3];
        let mut t = Strided::new(&mut p, 3)
            .unwrap()
            .with_normals(&mut q, 3)
            .unwrap();
        model
            .skin_mesh_with(Kernel::Portable, m, &bones, 0, n, 0, &mut t)
            .unwrap();
        for v in 0..n {
            let (wp, wn) = direct_f64(mesh.influences(v), &bones);
            for k in 0..3 {
                let dp = (f64::from(p[3 * v + k]) - wp[k]).abs() / f64::from(scale);
                let dn = (f64::from(q[3 * v + k]) - wn[k]).abs();
                assert!(
                    dp <= 2e-6,
                    "{name} mesh {m} vertex {v}: position off by {dp:e} of the scale"
                );
                assert!(
                    dn <= 2e-5,
                    "{name} mesh {m} vertex {v}: normal off by {dn:e}"
                );
                worst = worst.max(dp);
            }
        }
    }
    worst
}

/// A tube rig whose vertices' influences `change` rewrites: it gets each vertex's index, its
/// influences (to edit in place) and the bone count.
fn rig_with(rig: TubeRig, mut change: impl FnMut(usize, &mut Vec<Influence>, u32)) -> Model {
    let mut parts: ModelParts = rig.parts();
    let mesh = &mut parts.meshes[0];
    let nb = parts.bones.len() as u32;
    let mut starts = vec![0u32];
    let mut influences = Vec::new();
    for v in 0..mesh.influence_start.len() - 1 {
        let own = &mesh.influences
            [mesh.influence_start[v] as usize..mesh.influence_start[v + 1] as usize];
        let mut infl: Vec<Influence> = own.to_vec();
        change(v, &mut infl, nb);
        influences.extend(infl);
        starts.push(influences.len() as u32);
    }
    mesh.influence_start = starts;
    mesh.influences = influences;
    Model::from_parts(parts).unwrap()
}

/// A rig with every kind of vertex the layout knows: one influence of weight 1 and of another
/// weight, several influences that agree on a bind point (the palette) and that do not (direct),
/// none at all, a zero weight, eleven influences.
fn mixed_rig() -> Model {
    let mut seed = 12345u32;
    let mut rnd = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let rig = TubeRig {
        rings_per_bone: 5,
        sides: 7,
        ..TubeRig::default()
    };
    rig_with(rig, |v, infl, nb| {
        match v % 9 {
            // A single influence whose weight is not 1.
            1 if infl.len() == 1 => {
                let f = 0.5 + rnd() * 0.4;
                let i = &mut infl[0];
                i.origin = i.origin.map(|x| x * f);
                i.normal = i.normal.map(|x| x * f);
                i.weight = f;
            }
            // Influences that disagree on where the vertex is: skinned influence by influence.
            2 if infl.len() > 1 => infl[0].origin[0] += 0.01 + rnd(),
            // Normals that disagree, as a Sims vertex's do.
            3 if infl.len() > 1 => infl[1].normal = [0.0, 0.0, 0.0],
            4 => infl.clear(),
            // A bone that takes no part (weight 0, nothing stored).
            5 => infl.push(Influence {
                origin: [0.0; 3],
                weight: 0.0,
                normal: [0.0; 3],
                bone: (v as u32 * 7) % nb,
            }),
            // Eleven influences on eleven bones that agree on the point: in the bind pose the
            // rig's bones are not rotated, so bone b's space is model space less (0, 0, b L).
            6 => {
                let base = infl[0];
                let length = 10.0;
                let p = [
                    base.origin[0] / base.weight,
                    base.origin[1] / base.weight,
                    base.origin[2] / base.weight + base.bone as f32 * length,
                ];
                let n = base.normal.map(|x| x / base.weight);
                infl.clear();
                for k in 0..11u32 {
                    let bone = (base.bone + k) % nb;
                    let f = 1.0 / 11.0 + (k as f32 - 5.0) * 0.01;
                    let z = p[2] - bone as f32 * length;
                    infl.push(Influence {
                        origin: [f * p[0], f * p[1], f * z],
                        weight: f,
                        normal: n.map(|x| x * f),
                        bone,
                    });
                }
            }
            _ => {}
        }
    })
}

/// More bones than the palette's per-call buffer: multi-influence vertices go direct.
fn many_bones_rig() -> Model {
    TubeRig {
        bones: 300,
        rings_per_bone: 1,
        sides: 5,
        ..TubeRig::default()
    }
    .build()
    .unwrap()
}

#[test]
fn the_layout_sorts_vertices_by_how_they_are_skinned() {
    let model = mixed_rig();
    let mesh = &model.meshes()[0];
    let layout = mesh.skin_layout();
    let n = mesh.vertex_count();
    assert_eq!(layout.one_bone + layout.palette + layout.direct, n);
    let count =
        |f: &dyn Fn(&[Influence]) -> bool| (0..n).filter(|&v| f(mesh.influences(v))).count();
    // Single influences (whatever their weight) follow their bone; empty vertices go direct.
    assert_eq!(layout.one_bone, count(&|i| i.len() == 1));
    let disagreeing = (0..n)
        .filter(|&v| v % 9 == 2 || v % 9 == 3)
        .filter(|&v| mesh.influences(v).len() > 1)
        .count();
    assert!(disagreeing > 0);
    assert_eq!(layout.direct, count(&|i| i.is_empty()) + disagreeing);
    assert!(layout.palette > 0 && layout.sets > 0 && layout.sets < layout.palette);
    // No 24 consecutive vertices share a matrix: every one-bone and palette vertex is in a
    // stretch, with a 32-byte operand naming its matrix.
    assert_eq!(layout.in_runs, 0);
    assert!(layout.heap_bytes >= (layout.one_bone + layout.palette) * 32);
    let in_runs = |m: &Model| {
        m.meshes()
            .iter()
            .map(|m| m.skin_layout().in_runs)
            .sum::<usize>()
    };
    // The built tube's rings (of 32 vertices here) share a bone or a set: every vertex is in a
    // run.
    let tube = TubeRig::with_vertices(3000).build().unwrap();
    assert_eq!(in_runs(&tube), tube.meshes()[0].vertex_count());

    // Past 256 bones the per-call buffer is too small: every multi-influence vertex goes direct.
    let many = many_bones_rig();
    let mesh = &many.meshes()[0];
    let layout = mesh.skin_layout();
    assert_eq!((layout.palette, layout.sets), (0, 0));
    assert_eq!(
        layout.direct,
        (0..mesh.vertex_count())
            .filter(|&v| mesh.influences(v).len() > 1)
            .count()
    );
}

/// A tube whose first half of vertices follow one bone each, in long runs, and whose second
/// half are skinned influence by influence (their six influences disagree).
fn cheap_then_dear_rig() -> Model {
    let rig = TubeRig {
        rings_per_bone: 40,
        sides: 10,
        ..TubeRig::default()
    };
    let n = rig.parts().meshes[0].influence_start.len() - 1;
    rig_with(rig, |v, infl, nb| {
        let first = infl[0];
        infl.clear();
        if v < n / 2 {
            infl.push(Influence {
                weight: 1.0,
                ..first
            });
        } else {
            for k in 0..6u32 {
                infl.push(Influence {
                    origin: [k as f32, 1.0, 2.0],
                    weight: 1.0 / 6.0,
                    normal: [0.0, 0.0, 1.0 / 6.0],
                    bone: (first.bone + k) % nb,
                });
            }
        }
    })
}

#[test]
fn split_ranges_balance_work_and_align_cuts() {
    let model = cheap_then_dear_rig();
    let mesh = &model.meshes()[0];
    let n = mesh.vertex_count();
    let layout = mesh.skin_layout();
    assert_eq!((layout.one_bone, layout.direct), (n / 2, n - n / 2));
    assert_eq!(mesh.skin_split(1), vec![0, n]);
    let grain = ossa::skin::SKIN_SPLIT_GRAIN;
    for parts in [2, 3, 7] {
        let cuts = mesh.skin_split(parts);
        assert_eq!(cuts.len(), parts + 1);
        assert_eq!((cuts[0], cuts[parts]), (0, n));
        assert!(cuts.windows(2).all(|w| w[0] <= w[1]), "{cuts:?}");
        assert!(cuts[1..parts].iter().all(|c| c % grain == 0), "{cuts:?}");
    }
    // The dear half holds most of the work: the cut between two threads falls inside it.
    let cut = mesh.skin_split(2)[1];
    assert!(cut > n / 2 + grain && cut < n, "cut at {cut} of {n}");

    // The two ranges give the bits of one call.
    let bones = two_frame_pose(&model);
    let layout = LAYOUTS[0];
    let whole = skin_into(&model, Kernel::selected(), 0, &bones, 0, n, 0, layout);
    let low = skin_into(&model, Kernel::selected(), 0, &bones, 0, cut, 0, layout);
    let high = skin_into(
        &model,
        Kernel::selected(),
        0,
        &bones,
        cut,
        n - cut,
        0,
        layout,
    );
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let joined: Vec<f32> = low.a[..low.a_len]
        .iter()
        .chain(&high.a[..high.a_len])
        .copied()
        .collect();
    assert_eq!(bits(&joined), bits(&whole.a[..whole.a_len]));
}

#[test]
fn kernels_match_the_portable_one_on_built_rigs() {
    report_missing_kernels("kernels_match_the_portable_one_on_built_rigs");
    let models = [
        ("tube", TubeRig::default().build().unwrap()),
        ("mixed", mixed_rig()),
        ("many bones", many_bones_rig()),
        ("cheap then dear", cheap_then_dear_rig()),
        ("tube 20k", TubeRig::with_vertices(20_000).build().unwrap()),
    ];
    for (name, model) in &models {
        let worst = check_kernels(name, model, &LAYOUTS);
        eprintln!("{name}: AVX2 and AVX-512 differ from portable by at most {worst:.2} ulp");
    }
}

#[test]
fn split_ranges_give_the_bits_of_one_call() {
    // Every split of a small mesh; a spread of splits of larger ones.
    check_splits("tube", &TubeRig::default().build().unwrap(), |n| {
        (0..=n).collect()
    });
    check_splits("mixed", &mixed_rig(), |n| (0..=n).collect());
    check_splits(
        "tube 20k",
        &TubeRig::with_vertices(20_000).build().unwrap(),
        |n| (0..=n).step_by(997).chain([n / 2, n - 1]).collect(),
    );
}

#[test]
fn the_palette_keeps_the_stored_formula() {
    for (name, model) in [
        ("tube", TubeRig::default().build().unwrap()),
        ("mixed", mixed_rig()),
        ("many bones", many_bones_rig()),
    ] {
        let worst = check_exact(name, &model);
        eprintln!("{name}: positions within {worst:e} of the scale");
    }
}

/// The corpus's DPMs and SKMs (with their skeletons), or None after saying why.
fn corpus_models() -> Option<Vec<(String, Model)>> {
    let mut out = Vec::new();
    for kind in ["dpm", "skm"] {
        let dir = corpus::corpus_subdir(kind, "skin kernel corpus checks")?;
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == kind))
            .collect();
        paths.sort();
        for path in paths {
            let model = Model::load_file(&path, &LoadOptions::default())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((
                path.file_name().unwrap().to_string_lossy().into_owned(),
                model,
            ));
        }
    }
    Some(out)
}

#[test]
fn kernels_match_the_portable_one_on_the_corpus() {
    let Some(models) = corpus_models() else {
        return;
    };
    report_missing_kernels("kernels_match_the_portable_one_on_the_corpus");
    for (name, model) in &models {
        // Three layouts per model (packed, side by side, element by element) keep the
        // debug-build run short; the built rigs try them all.
        let worst = check_kernels(name, model, &[LAYOUTS[0], LAYOUTS[2], LAYOUTS[7]]);
        eprintln!("{name}: AVX2 and AVX-512 differ from portable by at most {worst:.2} ulp");
        // Each influence set's vertices together: most vertices in runs, which the wide
        // kernels skin many at a time.
        let (grouped, _) = model
            .optimized(ossa::optimize::OPTIMIZE_SKIN_ORDER)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let worst = check_kernels(name, &grouped, &[LAYOUTS[0], LAYOUTS[6], LAYOUTS[7]]);
        eprintln!("{name} in skin order: within {worst:.2} ulp");
    }
}

#[test]
fn the_palette_keeps_the_stored_formula_on_the_corpus() {
    let Some(models) = corpus_models() else {
        return;
    };
    for (name, model) in &models {
        let layout = model
            .meshes()
            .iter()
            .map(|m| m.skin_layout())
            .fold((0, 0, 0), |a, l| {
                (a.0 + l.palette, a.1 + l.sets, a.2 + l.direct)
            });
        // The files' per-influence normals disagree by more than their weights' rounding (1e-5
        // of their length, up to 1.6e-4) on a few vertices: those are skinned influence by
        // influence; every other multi-influence vertex shares a set. zombie.dpm: 465 sets,
        // 450 distinct ones (the lookup's small cache files a few twice).
        let expected = match name.as_str() {
            "xon_zombie.dpm" => Some((2479, 465, 6)),
            "xon_okmale1.dpm" => Some((1199, 8, 8)),
            "xon_okrobot1.dpm" => Some((664, 38, 6)),
            "xon_wyvern_lod2.dpm" => Some((939, 201, 16)),
            _ => None,
        };
        if let Some(expected) = expected {
            assert_eq!(
                layout, expected,
                "{name}: palette vertices, sets and direct vertices"
            );
        }
        let worst = check_exact(name, model);
        eprintln!("{name}: positions within {worst:e} of the scale");
    }
}

/// A target of the caller's own, which has no raw addresses: kernels write through `put`.
struct Recorded(Vec<(usize, [f32; 3], [f32; 3])>);

impl SkinTarget for Recorded {
    fn capacity(&self) -> usize {
        usize::MAX
    }
    fn wants_normals(&self) -> bool {
        true
    }
    fn put(&mut self, i: usize, position: [f32; 3], normal: [f32; 3]) {
        self.0.push((i, position, normal));
    }
}

#[test]
fn a_callers_own_target_gets_the_portable_kernels_output() {
    let model = mixed_rig();
    let bones = two_frame_pose(&model);
    let n = model.meshes()[0].vertex_count();
    let mut reference = Recorded(Vec::new());
    model
        .skin_mesh_with(Kernel::Portable, 0, &bones, 0, n, 0, &mut reference)
        .unwrap();
    reference.0.sort_by_key(|e| e.0);
    assert_eq!(reference.0.len(), n);
    assert!(reference.0.iter().enumerate().all(|(i, e)| e.0 == i));
    for kernel in Kernel::available() {
        let mut got = Recorded(Vec::new());
        model
            .skin_mesh_with(kernel, 0, &bones, 0, n, 0, &mut got)
            .unwrap();
        got.0.sort_by_key(|e| e.0);
        assert_eq!(got.0, reference.0, "{kernel:?}");
    }
}

#[test]
fn kernels_are_named_and_detected() {
    assert!(Kernel::Portable.is_available());
    assert_eq!(Kernel::available().next(), Some(Kernel::Portable));
    assert!(Kernel::best().is_available());
    assert!(Kernel::selected().is_available());
    for k in Kernel::ALL {
        assert_eq!(Kernel::from_name(k.name()), Some(k));
        assert_eq!(Kernel::from_name(&k.name().to_uppercase()), Some(k));
    }
    assert_eq!(Kernel::from_name("neon"), None);
    #[cfg(target_arch = "x86_64")]
    assert!(Kernel::Sse2.is_available(), "SSE2 is part of x86-64");
    // A kernel the CPU lacks is refused before anything is written.
    let model = TubeRig::default().build().unwrap();
    let bones = two_frame_pose(&model);
    for k in Kernel::ALL.into_iter().filter(|k| !k.is_available()) {
        let mut p = [SENTINEL; 3];
        let mut t = Strided::new(&mut p, 3).unwrap();
        let e = model
            .skin_mesh_with(k, 0, &bones, 0, 1, 0, &mut t)
            .unwrap_err();
        assert_eq!(e.code(), ossa::ErrorCode::InvalidArgument);
        assert_eq!(p, [SENTINEL; 3]);
    }
}

/// Lengths of the runs of [`runs_rig`]: the layout reads runs of 24 or more vertices from the
/// influences, and shorter ones form a stretch.
const RUN_LENGTHS: [u32; 17] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 22, 23, 24, 25, 26];

/// A one-influence mesh over the tube's skeleton: runs of [`RUN_LENGTHS`] consecutive vertices,
/// 198 in all, each run on the next bone; every weight 1, or weights between 0.5 and 1.
fn runs_rig(weight_one: bool) -> Model {
    let mut parts = TubeRig::default().parts();
    let nb = parts.bones.len() as u32;
    let mut seed = 7u32;
    let mut rnd = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut influences = Vec::new();
    for (run, len) in (0u32..).zip(RUN_LENGTHS) {
        for _ in 0..len {
            let f = if weight_one { 1.0 } else { 0.5 + 0.5 * rnd() };
            let mut c = |scale: f32| (rnd() - 0.5) * scale * f;
            influences.push(Influence {
                origin: [c(6.0), c(6.0), c(40.0)],
                weight: f,
                normal: [c(2.0), c(2.0), c(2.0)],
                bone: run % nb,
            });
        }
    }
    let n = influences.len() as u32;
    parts.meshes = vec![MeshParts {
        name: Name::from("runs"),
        influence_start: (0..=n).collect(),
        influences,
        ..MeshParts::default()
    }];
    Model::from_parts(parts).unwrap()
}

#[test]
fn one_influence_runs_keep_no_copy_of_their_influences() {
    for weight_one in [true, false] {
        let model = runs_rig(weight_one);
        let mesh = &model.meshes()[0];
        let layout = mesh.skin_layout();
        assert_eq!(mesh.vertex_count(), 198);
        assert_eq!(
            (layout.one_bone, layout.palette, layout.direct),
            (198, 0, 0)
        );
        // The runs of 24 to 26 vertices.
        assert_eq!(layout.in_runs, 75);
        // Three bone groups (the bones of those runs) of 28 bytes, three runs of 12 naming
        // where their influences start, and the 123 vertices of the shorter runs, consecutive,
        // as one stretch (16 bytes) with a copy of each influence naming its table slot, one of
        // five bones (4 bytes each): 4,208 bytes, where the influences themselves take 6,336.
        assert_eq!(layout.heap_bytes, 3 * 28 + 3 * 12 + 16 + 5 * 4 + 123 * 32);
        assert_eq!(std::mem::size_of_val(mesh.all_influences()), 6336);
    }
}

/// Vertex `x` under its bone's matrix `m` as `kernel` rounds it: the portable kernel and SSE2
/// `((c3 f + c0 ox) + c1 oy) + c2 oz` and `(c0 nx + c1 ny) + c2 nz`, rounding every product and
/// sum; AVX2 and AVX-512 the same with each `+ c_j o_j` fused (the first normal term added to +0). `unit`:
/// the normal divided by `sqrt((x x + y y) + z z)`.
fn formula(kernel: Kernel, m: &Mat3x4, x: &Influence, unit: bool) -> ([f32; 3], [f32; 3]) {
    let ([ox, oy, oz], [nx, ny, nz], f) = (x.origin, x.normal, x.weight);
    let (mut p, mut n) = ([0.0f32; 3], [0.0f32; 3]);
    for r in 0..3 {
        let [c0, c1, c2, c3] = [m.m[4 * r], m.m[4 * r + 1], m.m[4 * r + 2], m.m[4 * r + 3]];
        if matches!(kernel, Kernel::Avx2 | Kernel::Avx512) {
            p[r] = c2.mul_add(oz, c1.mul_add(oy, c0.mul_add(ox, c3 * f)));
            n[r] = c2.mul_add(nz, c1.mul_add(ny, c0.mul_add(nx, 0.0)));
        } else {
            p[r] = ((c3 * f + c0 * ox) + c1 * oy) + c2 * oz;
            n[r] = (c0 * nx + c1 * ny) + c2 * nz;
        }
    }
    let len = ((n[0] * n[0] + n[1] * n[1]) + n[2] * n[2]).sqrt();
    if unit && len > 0.0 {
        n = n.map(|c| c / len);
    }
    (p, n)
}

/// Element `i` of an output: its position, and its normal where the layout has normals.
fn element(out: &Output, layout: Layout, i: usize) -> ([f32; 3], Option<[f32; 3]>) {
    let at = |buf: &[f32], k: usize| [buf[k], buf[k + 1], buf[k + 2]];
    match layout {
        Layout::Strided {
            position_stride,
            normal_stride,
        } => (
            at(&out.a, i * position_stride),
            (normal_stride > 0).then(|| at(&out.b, i * normal_stride)),
        ),
        Layout::Interleaved {
            stride,
            position_at,
            normal_at,
        } => (
            at(&out.a, i * stride + position_at),
            normal_at.map(|n| at(&out.a, i * stride + n)),
        ),
    }
}

#[test]
fn kernels_skin_runs_read_from_influences_as_the_formula_rounds() {
    // Elements of 12, 16, 24 and 32 bytes in buffers of their own, positions alone, and a
    // position and its normal side by side in 24 and 32 bytes, either way round.
    let layouts = [3, 4, 6, 8]
        .map(|s| Layout::Strided {
            position_stride: s,
            normal_stride: s,
        })
        .into_iter()
        .chain([
            Layout::Strided {
                position_stride: 3,
                normal_stride: 0,
            },
            Layout::Interleaved {
                stride: 6,
                position_at: 0,
                normal_at: Some(3),
            },
            Layout::Interleaved {
                stride: 6,
                position_at: 3,
                normal_at: Some(0),
            },
            Layout::Interleaved {
                stride: 8,
                position_at: 0,
                normal_at: Some(4),
            },
            Layout::Interleaved {
                stride: 8,
                position_at: 4,
                normal_at: Some(0),
            },
        ]);
    let layouts: Vec<Layout> = layouts.collect();
    for weight_one in [true, false] {
        let model = runs_rig(weight_one);
        let bones = two_frame_pose(&model);
        let mesh = &model.meshes()[0];
        let n = mesh.vertex_count();
        for kernel in Kernel::available() {
            for &layout in &layouts {
                for flags in [0, SKIN_NORMALIZE] {
                    let unit = flags == SKIN_NORMALIZE;
                    // From every vertex, to the end and for nine vertices: every run is cut
                    // at every place, and blocks start at every offset within a run.
                    for first in 0..n {
                        for count in [n - first, (n - first).min(9)] {
                            let out =
                                skin_into(&model, kernel, 0, &bones, first, count, flags, layout);
                            let what = format!(
                                "{kernel:?} {layout:?} flags {flags} weight one {weight_one} \
                                 {first}+{count}"
                            );
                            for i in 0..count {
                                let x = &mesh.influences(first + i)[0];
                                let (p, nr) = formula(kernel, &bones[x.bone as usize], x, unit);
                                let (got_p, got_n) = element(&out, layout, i);
                                let bits = |v: [f32; 3]| v.map(f32::to_bits);
                                assert_eq!(bits(got_p), bits(p), "{what}: vertex {i} position");
                                if let Some(got_n) = got_n {
                                    assert_eq!(bits(got_n), bits(nr), "{what}: vertex {i} normal");
                                }
                            }
                            for (second, buf, len) in
                                [(false, &out.a, out.a_len), (true, &out.b, out.b_len)]
                            {
                                let w = written(layout, len, second);
                                for (k, &x) in buf.iter().enumerate() {
                                    if !w.get(k).is_some_and(|w| w.0) {
                                        assert_eq!(
                                            x.to_bits(),
                                            SENTINEL.to_bits(),
                                            "{what}: float {k} outside the elements"
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Skins the mixed rig (all of it in stretches) with the best kernel into packed buffers.
fn skin_mixed_bits() -> Vec<u32> {
    let model = mixed_rig();
    let bones = two_frame_pose(&model);
    let n = model.meshes()[0].vertex_count();
    let (mut p, mut q) = (vec![0.0f32; n * 3], vec![0.0f32; n * 3]);
    let mut t = Strided::new(&mut p, 3)
        .unwrap()
        .with_normals(&mut q, 3)
        .unwrap();
    model.skin_mesh(0, &bones, 0, n, 0, &mut t).unwrap();
    p.iter().chain(&q).map(|x| x.to_bits()).collect()
}

/// Skinning keeps a per-thread table of matrices; a thread-local's destructor that skins after
/// (or before) that table is gone still gets the bits of an ordinary call.
#[test]
fn skinning_works_while_a_thread_s_locals_are_destroyed() {
    use std::sync::Mutex;
    static FROM_DESTRUCTOR: Mutex<Vec<Vec<u32>>> = Mutex::new(Vec::new());
    struct SkinsOnDrop;
    impl Drop for SkinsOnDrop {
        fn drop(&mut self) {
            FROM_DESTRUCTOR.lock().unwrap().push(skin_mixed_bits());
        }
    }
    thread_local! {
        static GUARD: SkinsOnDrop = const { SkinsOnDrop };
    }
    let expected = skin_mixed_bits();
    // Destructors run in either order relative to the table's: once with the guard made
    // before the first skinning on its thread, once after.
    for guard_first in [true, false] {
        std::thread::spawn(move || {
            if guard_first {
                GUARD.with(|_| {});
                skin_mixed_bits();
            } else {
                skin_mixed_bits();
                GUARD.with(|_| {});
            }
        })
        .join()
        .unwrap();
    }
    let got = FROM_DESTRUCTOR.lock().unwrap();
    assert_eq!(got.len(), 2);
    for bits in got.iter() {
        assert!(*bits == expected, "a destructor's skinning differs");
    }
}
