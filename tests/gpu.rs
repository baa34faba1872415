//! GPU skinning data: the strongest influences with weights summing to 1, strongest first, and
//! linear blend skinning with the skinning matrices equal to skin_mesh on a generated rig.

use ossa::synth::TubeRig;
use ossa::{ErrorCode, FrameBlend, Mat3x4, Strided};

#[test]
fn linear_blend_skinning_with_the_gpu_data_matches_skin_mesh() {
    let model = TubeRig::default().build().unwrap();
    let nb = model.bones().len();
    let n = model.meshes()[0].vertex_count();

    let mut bind = vec![0.0f32; n * 3];
    model
        .bind_vertices(0, 0, n, 0, &mut Strided::new(&mut bind, 3).unwrap())
        .unwrap();
    let mut ids = vec![0u16; n * 4];
    let mut weights = vec![0.0f32; n * 4];
    assert_eq!(model.gpu_weights(0, 4, &mut ids, &mut weights).unwrap(), 0);

    let mut bones = vec![Mat3x4::IDENTITY; nb];
    let blend = [
        FrameBlend {
            frame: 1,
            weight: 0.3,
        },
        FrameBlend {
            frame: 3,
            weight: 0.7,
        },
    ];
    model.pose_frames(&blend, None, &mut bones).unwrap();
    let mut shader = vec![Mat3x4::IDENTITY; nb];
    model.skinning_matrices(&bones, &mut shader).unwrap();
    let mut skinned = vec![0.0f32; n * 3];
    model
        .skin_mesh(
            0,
            &bones,
            0,
            n,
            0,
            &mut Strided::new(&mut skinned, 3).unwrap(),
        )
        .unwrap();

    for v in 0..n {
        let w = &weights[v * 4..v * 4 + 4];
        assert!(
            (w.iter().sum::<f32>() - 1.0).abs() < 1e-6,
            "vertex {v}: {w:?}"
        );
        assert!(
            w.windows(2).all(|p| p[0] >= p[1]),
            "vertex {v}: strongest first: {w:?}"
        );
        let p = [bind[3 * v], bind[3 * v + 1], bind[3 * v + 2]];
        let mut out = [0.0f32; 3];
        for k in 0..4 {
            let q = shader[ids[v * 4 + k] as usize].transform_point(p);
            for a in 0..3 {
                out[a] += w[k] * q[a];
            }
        }
        for a in 0..3 {
            assert!(
                (out[a] - skinned[3 * v + a]).abs() < 1e-4,
                "vertex {v}: {out:?} vs skinned"
            );
        }
    }

    // Keeping one influence drops the second of every blended vertex.
    let mut one_id = vec![0u16; n];
    let mut one_w = vec![0.0f32; n];
    assert_eq!(model.gpu_weights(0, 1, &mut one_id, &mut one_w).unwrap(), 1);
    assert!(one_w.iter().all(|&w| w == 1.0));
    // Too small an output, 0 or 9 per vertex: nothing written.
    let mut small = vec![7u16; n * 4 - 1];
    let e = model
        .gpu_weights(0, 4, &mut small, &mut weights)
        .unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(small.iter().all(|&b| b == 7));
    assert_eq!(
        model
            .gpu_weights(0, 0, &mut ids, &mut weights)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        model
            .gpu_weights(0, 9, &mut ids, &mut weights)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
}

#[test]
fn inverse_bind_undoes_the_bind_pose() {
    let model = TubeRig::default().build().unwrap();
    let nb = model.bones().len();
    let mut inverse = vec![Mat3x4::IDENTITY; nb];
    model.inverse_bind(&mut inverse).unwrap();
    for (b, (m, i)) in model
        .skeleton()
        .bind_pose()
        .iter()
        .zip(&inverse)
        .enumerate()
    {
        let product = m.mul(i);
        for (x, y) in product.m.iter().zip(Mat3x4::IDENTITY.m) {
            assert!((x - y).abs() < 1e-5, "bone {b}: {product:?}");
        }
    }
    let mut wrong = vec![Mat3x4::IDENTITY; nb + 1];
    assert_eq!(
        model.inverse_bind(&mut wrong).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
}
