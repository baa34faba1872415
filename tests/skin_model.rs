//! Model::skin_model: every mesh in one call, as skin_mesh gives each; refusals before anything
//! is written.

mod corpus;

use ossa::{FrameBlend, Mat3x4, Model, Strided};

fn zombie() -> Option<Model> {
    let path = corpus::corpus_dir().join("dpm/xon_zombie.dpm");
    match std::fs::read(&path) {
        Ok(bytes) => Some(Model::load(&bytes, &Default::default()).unwrap()),
        Err(_) => {
            eprintln!("corpus not found at {}; skipping", path.display());
            None
        }
    }
}

#[test]
fn every_mesh_in_one_call_is_each_mesh_skinned() {
    let Some(model) = zombie() else { return };
    let mut bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    model
        .pose_frames(
            &[FrameBlend {
                frame: 300,
                weight: 1.0,
            }],
            None,
            &mut bones,
        )
        .unwrap();
    let sizes: Vec<usize> = model.meshes().iter().map(|m| m.vertex_count()).collect();
    assert_eq!(sizes, [108, 2636]);
    let mut positions: Vec<Vec<f32>> = sizes.iter().map(|&n| vec![0.0; 3 * n]).collect();
    let mut normals: Vec<Vec<f32>> = sizes.iter().map(|&n| vec![0.0; 3 * n]).collect();
    {
        let mut targets: Vec<Strided> = positions
            .iter_mut()
            .zip(&mut normals)
            .map(|(p, n)| Strided::new(p, 3).unwrap().with_normals(n, 3).unwrap())
            .collect();
        model
            .skin_model(&bones, ossa::SKIN_NORMALIZE, &mut targets)
            .unwrap();
    }
    for (m, &n) in sizes.iter().enumerate() {
        let (mut p, mut q) = (vec![0.0f32; 3 * n], vec![0.0f32; 3 * n]);
        let mut one = Strided::new(&mut p, 3)
            .unwrap()
            .with_normals(&mut q, 3)
            .unwrap();
        model
            .skin_mesh(m, &bones, 0, n, ossa::SKIN_NORMALIZE, &mut one)
            .unwrap();
        assert_eq!(positions[m], p, "mesh {m}");
        assert_eq!(normals[m], q, "mesh {m}");
    }
}

#[test]
fn a_wrong_target_count_or_a_short_target_writes_nothing() {
    let Some(model) = zombie() else { return };
    let bones = vec![Mat3x4::IDENTITY; model.bones().len()];
    let mut a = vec![7.0f32; 3 * 108];
    let mut b = vec![7.0f32; 3 * 2635];
    {
        let mut one = [Strided::new(&mut a, 3).unwrap()];
        let e = model.skin_model(&bones, 0, &mut one).unwrap_err();
        assert_eq!(e.to_string(), "1 targets given, the model has 2 meshes");
    }
    {
        let mut two = [
            Strided::new(&mut a, 3).unwrap(),
            Strided::new(&mut b, 3).unwrap(),
        ];
        let e = model.skin_model(&bones, 0, &mut two).unwrap_err();
        assert_eq!(
            e.to_string(),
            "target 1 holds 2635 vertices, mesh 1 has 2636"
        );
    }
    assert!(a.iter().chain(&b).all(|&x| x == 7.0));
}
