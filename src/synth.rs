//! Rigged models built in code: the CLI's demo, fixtures for tests, large meshes for benchmarks.
//!
//! A tube rig: a chain of bones along +z, a tube of rings around it whose vertices are shared
//! smoothly between the two nearest bones, and frames that bend the chain in a wave.

use glam::{Quat, Vec3};

use crate::error::Result;
use crate::format::Format;
use crate::math::Mat3x4;
use crate::model::{
    Animation, Bone, Frame, Influence, MeshParts, Model, ModelParts, Name, concat_into,
};

/// The shape of a tube rig.
#[derive(Clone, Debug)]
pub struct TubeRig {
    pub bones: u32,
    pub bone_length: f32,
    pub radius: f32,
    /// Rings of vertices per bone.
    pub rings_per_bone: u32,
    /// Vertices per ring.
    pub sides: u32,
    /// Frame 0 is the straight bind pose; the others bend the chain.
    pub frames: u32,
    /// Bend per bone at full swing, radians.
    pub bend: f32,
}

impl Default for TubeRig {
    fn default() -> Self {
        TubeRig {
            bones: 5,
            bone_length: 10.0,
            radius: 2.0,
            rings_per_bone: 4,
            sides: 8,
            frames: 4,
            bend: 0.35,
        }
    }
}

impl TubeRig {
    /// A rig with at least `vertices` vertices, for benchmarks.
    pub fn with_vertices(vertices: u32) -> TubeRig {
        let sides = 32;
        let bones = 24;
        let rings = vertices.div_ceil(sides);
        TubeRig {
            bones,
            rings_per_bone: rings.div_ceil(bones).max(1),
            sides,
            ..TubeRig::default()
        }
    }

    pub fn vertex_count(&self) -> u32 {
        (self.bones * self.rings_per_bone + 1) * self.sides
    }

    /// Parent-relative pose of `bone` in `frame`.
    pub fn local_pose(&self, frame: u32, bone: u32) -> Mat3x4 {
        let offset = if bone == 0 { 0.0 } else { self.bone_length };
        let t = [0.0, 0.0, offset];
        if frame == 0 {
            return Mat3x4::from_translation(t);
        }
        let phase = frame as f32 * 0.9 + bone as f32 * 0.6;
        let q = Quat::from_axis_angle(
            Vec3::new(1.0, 0.3 * (frame as f32).sin(), 0.0).normalize(),
            self.bend * phase.sin(),
        );
        Mat3x4::from_rotation_translation(q, t)
    }

    pub fn parts(&self) -> ModelParts {
        let nb = self.bones.max(1);
        let bones: Vec<Bone> = (0..nb)
            .map(|i| Bone {
                name: Name::from(format!("bone{i}").as_str()),
                parent: i as i32 - 1,
                flags: 0,
            })
            .collect();
        let frames = self.frames.max(1);
        let poses: Vec<Mat3x4> = (0..frames)
            .flat_map(|f| (0..nb).map(move |b| (f, b)))
            .map(|(f, b)| self.local_pose(f, b))
            .collect();

        let rings = nb * self.rings_per_bone.max(1) + 1;
        let sides = self.sides.max(3);
        let length = nb as f32 * self.bone_length;
        let mut influence_start = vec![0u32];
        let mut influences = Vec::new();
        let mut texcoords = Vec::new();
        for ring in 0..rings {
            let z = length * ring as f32 / (rings - 1) as f32;
            // Bone i spans [i L, (i + 1) L]; blend across each joint over half a bone either side.
            let along = z / self.bone_length - 0.5;
            let lower = along.floor().clamp(0.0, (nb - 1) as f32) as u32;
            let upper = (lower + 1).min(nb - 1);
            let t = (along - lower as f32).clamp(0.0, 1.0);
            let shares: &[(u32, f32)] = if upper == lower || t == 0.0 {
                &[(lower, 1.0)]
            } else if t == 1.0 {
                &[(upper, 1.0)]
            } else {
                &[(lower, 1.0 - t), (upper, t)]
            };
            for s in 0..sides {
                let a = std::f32::consts::TAU * s as f32 / sides as f32;
                let normal = [a.cos(), a.sin(), 0.0];
                let p = [self.radius * normal[0], self.radius * normal[1], z];
                for &(bone, w) in shares {
                    // In bind the bones have no rotation: bone space is model space less the joint.
                    let joint = bone as f32 * self.bone_length;
                    influences.push(Influence {
                        origin: [w * p[0], w * p[1], w * (p[2] - joint)],
                        weight: w,
                        normal: [w * normal[0], w * normal[1], 0.0],
                        bone,
                    });
                }
                influence_start.push(influences.len() as u32);
                texcoords.push([s as f32 / sides as f32, z / length]);
            }
        }
        let mut indices = Vec::new();
        for ring in 0..rings - 1 {
            for s in 0..sides {
                let a = ring * sides + s;
                let b = ring * sides + (s + 1) % sides;
                let c = b + sides;
                let d = a + sides;
                // Counter-clockwise seen from outside: (b - a) x (c - a) points outward.
                indices.extend_from_slice(&[a, b, c, a, c, d]);
            }
        }
        let triangles = indices.len() / 3;
        let mesh = MeshParts {
            name: Name::from("tube"),
            shader: Name::from("textures/tube"),
            influence_start,
            influences,
            indices,
            texcoords: Some(texcoords),
            group_ids: Some(vec![0; triangles]),
            references: None,
            ..MeshParts::default()
        };

        let mut frame_list: Vec<Frame> = (0..frames)
            .map(|f| {
                Frame::named(&if f == 0 {
                    "bind".to_owned()
                } else {
                    format!("bend{f}")
                })
            })
            .collect();
        // Bounds of each frame, as a writer of a real tool would store them.
        let mut abs = vec![Mat3x4::IDENTITY; nb as usize];
        for (f, frame) in frame_list.iter_mut().enumerate() {
            let local = poses
                .get(f * nb as usize..(f + 1) * nb as usize)
                .unwrap_or_default();
            concat_into(&bones, local, None, &mut abs);
            let (mut mins, mut maxs) = ([f32::MAX; 3], [f32::MIN; 3]);
            for w in mesh.influence_start.windows(2) {
                let mut p = [0.0f32; 3];
                for inf in mesh
                    .influences
                    .get(w[0] as usize..w[1] as usize)
                    .unwrap_or_default()
                {
                    let m = abs.get(inf.bone as usize).copied().unwrap_or_default();
                    let r = m.transform_vector(inf.origin);
                    let t = m.translation();
                    for k in 0..3 {
                        p[k] += r[k] + inf.weight * t[k];
                    }
                }
                for k in 0..3 {
                    mins[k] = mins[k].min(p[k]);
                    maxs[k] = maxs[k].max(p[k]);
                }
            }
            frame.mins = mins;
            frame.maxs = maxs;
            frame.yaw_radius = [mins, maxs]
                .iter()
                .map(|c| c[0].hypot(c[1]))
                .fold(0.0, f32::max);
            frame.radius = [mins, maxs]
                .iter()
                .map(|c| (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt())
                .fold(0.0, f32::max);
        }

        let mut parts = ModelParts::new(Format::Dpm);
        parts.bones = bones;
        parts.animations = vec![Animation {
            name: Name::from("wave"),
            first_frame: 0,
            frame_count: frames,
            fps: 10.0,
            looping: true,
            ..Animation::default()
        }];
        parts.frames = frame_list;
        parts.poses = poses.into();
        parts.meshes = vec![mesh];
        parts
    }

    pub fn build(&self) -> Result<Model> {
        Model::from_parts(self.parts())
    }
}
