//! Builds the glTF document with the `gltf-json` types and packs it as GLB or as JSON with a
//! base64 buffer.

use std::collections::HashMap;

use glam::Quat;
use gltf_json as json;
use json::validation::{Checked::Valid, USize64};
use json::{Index, Root, accessor, animation, buffer, material, mesh, scene, texture};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::math::Mat3x4;
use crate::model::{Influence, Model};
use crate::skin::{SKIN_NORMALIZE, Strided};

use super::axes::{Axes, Trs, conjugate, same_hemisphere, trs, unit_quat};
use super::exact::{Exactness, Written, measure};
use super::{Export, ExportOptions};

/// The binary chunk and the document that points into it.
struct Builder {
    root: Root,
    bin: Vec<u8>,
}

fn floats_bytes(data: &[f32]) -> Vec<u8> {
    data.iter().flat_map(|f| f.to_le_bytes()).collect()
}

fn bounds(data: &[f32], width: usize) -> (Value, Value) {
    let mut lo = vec![f32::INFINITY; width];
    let mut hi = vec![f32::NEG_INFINITY; width];
    for chunk in data.chunks_exact(width) {
        for (i, &v) in chunk.iter().enumerate() {
            lo[i] = lo[i].min(v);
            hi[i] = hi[i].max(v);
        }
    }
    (json!(lo), json!(hi))
}

impl Builder {
    fn view(&mut self, bytes: &[u8], target: Option<buffer::Target>) -> Index<buffer::View> {
        // Every accessor's offset must be a multiple of its component size; 4 covers them all.
        self.bin.resize(self.bin.len().next_multiple_of(4), 0);
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.root.push(buffer::View {
            buffer: Index::new(0),
            byte_length: USize64(bytes.len() as u64),
            byte_offset: Some(USize64(offset as u64)),
            byte_stride: None,
            name: None,
            target: target.map(Valid),
            extensions: None,
            extras: Default::default(),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn accessor(
        &mut self,
        bytes: &[u8],
        count: usize,
        component: accessor::ComponentType,
        type_: accessor::Type,
        normalized: bool,
        bounds: Option<(Value, Value)>,
        target: Option<buffer::Target>,
    ) -> Index<accessor::Accessor> {
        let view = self.view(bytes, target);
        let (min, max) = bounds.unzip();
        self.root.push(accessor::Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64(count as u64),
            component_type: Valid(accessor::GenericComponentType(component)),
            extensions: None,
            extras: Default::default(),
            type_: Valid(type_),
            min,
            max,
            name: None,
            normalized,
            sparse: None,
        })
    }

    /// Floats, `width` to an element; with `min`/`max` where glTF asks for them.
    fn floats(
        &mut self,
        data: &[f32],
        type_: accessor::Type,
        with_bounds: bool,
        target: Option<buffer::Target>,
    ) -> Index<accessor::Accessor> {
        let width = type_.multiplicity();
        let b = with_bounds.then(|| bounds(data, width));
        self.accessor(
            &floats_bytes(data),
            data.len() / width,
            accessor::ComponentType::F32,
            type_,
            false,
            b,
            target,
        )
    }
}

/// Names that stay apart where readers bind animation tracks by name: three.js takes a node by
/// its name with white space made `_` and `[ ] . : /` dropped, the first match winning.
#[derive(Default)]
struct UniqueNames {
    used: std::collections::HashSet<String>,
}

impl UniqueNames {
    fn take(&mut self, wanted: &str, fallback: impl FnOnce() -> String) -> String {
        let base = if wanted.is_empty() {
            fallback()
        } else {
            wanted.to_owned()
        };
        let mut name = base.clone();
        let mut k = 1;
        while !self.used.insert(sanitized(&name)) {
            k += 1;
            name = format!("{base}~{k}");
        }
        name
    }
}

fn sanitized(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '[' | ']' | '.' | ':' | '/'))
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

fn extras(value: Value) -> json::Extras {
    serde_json::value::to_raw_value(&value).ok()
}

fn name_of(n: &crate::model::Name) -> Option<String> {
    (!n.is_empty()).then(|| n.to_string_lossy())
}

/// A vertex's influences as glTF keeps them: one per bone (a file may name a bone twice), the
/// strongest first, at most `cap` (0: all), weights summing to 1.
fn vertex_weights(
    influences: &[Influence],
    cap: usize,
    out: &mut Vec<(u32, f32)>,
    exactness: &mut Exactness,
) {
    // One entry per bone, at the bone's first place in the file: sorted by bone, then merged,
    // so that a vertex of many influences costs n log n, not n squared.
    let mut by_bone: Vec<(u32, usize, f64)> = influences
        .iter()
        .enumerate()
        .map(|(k, i)| (i.bone, k, f64::from(i.weight)))
        .collect();
    by_bone.sort_by_key(|&(bone, k, _)| (bone, k));
    let mut placed: Vec<(u32, usize, f64)> = Vec::with_capacity(by_bone.len());
    for (bone, k, w) in by_bone {
        match placed.last_mut() {
            Some(last) if last.0 == bone => last.2 += w,
            _ => placed.push((bone, k, w)),
        }
    }
    placed.sort_by_key(|&(_, k, _)| k);
    let mut merged: Vec<(u32, f64)> = placed.into_iter().map(|(b, _, w)| (b, w)).collect();
    let total: f64 = merged.iter().map(|(_, w)| w).sum();
    let off = (total - 1.0).abs();
    if off > 1e-6 {
        exactness.unnormalised_vertices += 1;
        exactness.worst_weight_sum = exactness.worst_weight_sum.max(off as f32);
    }
    // Stable: ties keep the file's order.
    merged.sort_by(|a, b| b.1.total_cmp(&a.1));
    if cap > 0 && merged.len() > cap {
        exactness.capped_vertices += 1;
        exactness.most_dropped = exactness.most_dropped.max(merged.len() - cap);
        merged.truncate(cap);
    }
    merged.retain(|(_, w)| *w > 0.0);
    let kept: f64 = merged.iter().map(|(_, w)| w).sum();
    let start = out.len();
    if kept > 0.0 && kept.is_finite() {
        out.extend(merged.iter().map(|&(b, w)| (b, (w / kept) as f32)));
        // The f32 weights' sum, as a validator adds them, made 1 on the strongest.
        let sum: f64 = out[start..].iter().map(|&(_, w)| f64::from(w)).sum();
        out[start].1 = (f64::from(out[start].1) + (1.0 - sum)) as f32;
    }
}

struct MaterialKey {
    name: String,
    image: Option<usize>,
    color: Option<[f32; 4]>,
}

/// Materials by what they are, so that meshes and variants share them.
struct Materials {
    by_key: HashMap<(String, Option<usize>), Index<material::Material>>,
    /// One texture per image, by the image's index.
    textures: Vec<Index<texture::Texture>>,
}

impl Materials {
    fn get(&mut self, root: &mut Root, key: MaterialKey) -> Index<material::Material> {
        let id = (key.name.clone(), key.image);
        if let Some(&index) = self.by_key.get(&id) {
            return index;
        }
        let base_color_texture =
            key.image
                .and_then(|i| self.textures.get(i).copied())
                .map(|index| texture::Info {
                    index,
                    tex_coord: 0,
                    extensions: None,
                    extras: Default::default(),
                });
        let index = root.push(material::Material {
            name: Some(key.name),
            pbr_metallic_roughness: material::PbrMetallicRoughness {
                base_color_factor: material::PbrBaseColorFactor(key.color.unwrap_or([1.0; 4])),
                base_color_texture,
                // Old engines' materials are matte colour maps.
                metallic_factor: material::StrengthFactor(0.0),
                roughness_factor: material::StrengthFactor(1.0),
                ..Default::default()
            },
            ..Default::default()
        });
        self.by_key.insert(id, index);
        index
    }
}

/// Exports `model` as glTF 2.0.
pub fn export(model: &Model, options: &ExportOptions) -> Result<Export> {
    if model.unbound().is_some() {
        return Err(Error::invalid_argument(
            "the model's meshes wait for a skeleton: bind them to one first",
        ));
    }
    let scale = options.scale;
    if !(1e-6..=1e6).contains(&scale) {
        return Err(Error::invalid_argument(format!(
            "scale {scale} is not a number from 1e-6 to 1e6"
        )));
    }
    let axes = Axes::for_format(model.frame_format());
    let mirror = axes.determinant() < 0.0;
    let nb = model.bones().len();
    let mut b = Builder {
        root: Root::default(),
        bin: Vec::new(),
    };
    let mut exactness = Exactness::default();

    // Bones: nodes at the rest pose (frame 0), children listed under their parents.
    let mut rest = Vec::with_capacity(nb);
    let mut local = vec![Mat3x4::IDENTITY; nb];
    // A skeleton without frames keeps its bones at the identity (a failed write leaves `local`).
    let _ = model.skeleton().write_frame_poses(0, &mut local);
    let mut children: Vec<Vec<Index<scene::Node>>> = vec![Vec::new(); nb];
    let mut scene_nodes = Vec::new();
    for (i, bone) in model.bones().iter().enumerate() {
        match usize::try_from(bone.parent) {
            Ok(p) => children[p].push(Index::new(i as u32)),
            Err(_) => scene_nodes.push(Index::new(i as u32)),
        }
        rest.push(trs(&axes, scale, &local[i]));
    }
    // A Sims character also carries VitaMoo's extras (and ossa's record of what they lack).
    let keyed: std::collections::HashSet<u32> =
        model.keyframes().iter().map(|k| k.animation).collect();
    let written_scene =
        |a: usize| model.animations()[a].frame_count > 0 || keyed.contains(&(a as u32));
    let mut sims = super::vitamoo::is_sims(model)
        .then(|| super::vitamoo::extras(model, options.textures, scale, &written_scene));
    let single_root = scene_nodes.len() == 1;
    let mut names = UniqueNames::default();
    for (i, (bone, children)) in model.bones().iter().zip(children).enumerate() {
        let t = rest[i];
        let wanted = bone.name.to_string_lossy();
        let name = names.take(&wanted, || format!("bone {i}"));
        let mut info = serde_json::Map::new();
        if bone.flags != 0 {
            info.insert("flags".into(), json!(bone.flags));
        }
        if name != wanted {
            info.insert("name".into(), json!(wanted));
        }
        if let Some(s) = sims.as_mut() {
            info.append(&mut s.bones[i]);
            if single_root && bone.parent < 0 {
                info.append(&mut s.root);
            }
        }
        b.root.push(scene::Node {
            name: Some(name),
            children: (!children.is_empty()).then_some(children),
            translation: (t.t != [0.0; 3]).then_some(t.t),
            rotation: (t.r != [0.0, 0.0, 0.0, 1.0]).then_some(scene::UnitQuaternion(t.r)),
            scale: (t.s != [1.0; 3]).then_some(t.s),
            extras: if info.is_empty() {
                Default::default()
            } else {
                extras(Value::Object(info))
            },
            ..Default::default()
        });
    }

    // A skin's joints need one common root: several root bones hang under a node of their own.
    let skeleton_root = if scene_nodes.len() > 1 {
        let root = b.root.push(scene::Node {
            name: Some(names.take("skeleton", String::new)),
            children: Some(std::mem::take(&mut scene_nodes)),
            extras: match sims.as_mut() {
                Some(s) => extras(Value::Object(std::mem::take(&mut s.root))),
                None => Default::default(),
            },
            ..Default::default()
        });
        scene_nodes.push(root);
        Some(root)
    } else {
        scene_nodes.first().copied()
    };

    // Inverse bind matrices in glTF's frame (column-major 4x4).
    let inverse_binds: Vec<Mat3x4> = model
        .skeleton()
        .inverse_bind()
        .iter()
        .map(|m| conjugate(&axes, scale, m))
        .collect();

    // Images, then one texture each.
    let mut materials = Materials {
        by_key: HashMap::new(),
        textures: Vec::new(),
    };
    if let Some(found) = options.textures {
        let sampler = (!found.images.is_empty()).then(|| {
            b.root.push(texture::Sampler {
                wrap_s: Valid(texture::WrappingMode::Repeat),
                wrap_t: Valid(texture::WrappingMode::Repeat),
                ..Default::default()
            })
        });
        for image in &found.images {
            let view = b.view(&image.png, None);
            let source = b.root.push(json::Image {
                buffer_view: Some(view),
                mime_type: Some(json::image::MimeType("image/png".to_owned())),
                name: Some(image.name.clone()),
                uri: None,
                extensions: None,
                extras: Default::default(),
            });
            let t = b.root.push(texture::Texture {
                name: Some(image.name.clone()),
                sampler,
                source,
                extensions: None,
                extras: Default::default(),
            });
            materials.textures.push(t);
        }
    }

    // Meshes, each one node with one primitive, at the scene's root as glTF asks of skinned meshes.
    let skin = (nb > 0 && !model.meshes().is_empty()).then(|| Index::<json::Skin>::new(0));
    let mut written = Vec::with_capacity(model.meshes().len());
    let joints_u8 = nb <= 256;
    for (m, mesh) in model.meshes().iter().enumerate() {
        let n = mesh.vertex_count();
        let mut pos = vec![0.0f32; n * 3];
        let mut nrm = vec![0.0f32; n * 3];
        Strided::new(&mut pos, 3)
            .and_then(|t| t.with_normals(&mut nrm, 3))
            .and_then(|mut t| model.bind_vertices(m, 0, n, SKIN_NORMALIZE, &mut t))?;
        let to_gltf = axes.matrix(scale);
        let mut positions = Vec::with_capacity(n);
        for (p, nv) in pos.chunks_exact_mut(3).zip(nrm.chunks_exact_mut(3)) {
            let q = to_gltf.transform_point([p[0], p[1], p[2]]);
            p.copy_from_slice(&q);
            positions.push(q);
            nv.copy_from_slice(&unit_normal(axes.vector([nv[0], nv[1], nv[2]])));
        }
        let mut attributes = std::collections::BTreeMap::new();
        let position = b.floats(
            &pos,
            accessor::Type::Vec3,
            true,
            Some(buffer::Target::ArrayBuffer),
        );
        attributes.insert(Valid(mesh::Semantic::Positions), position);
        let normal = b.floats(
            &nrm,
            accessor::Type::Vec3,
            false,
            Some(buffer::Target::ArrayBuffer),
        );
        attributes.insert(Valid(mesh::Semantic::Normals), normal);
        if let Some(uv) = mesh.texcoords() {
            let flip = flips_v(model, mesh.material());
            let data: Vec<f32> = uv
                .iter()
                .flat_map(|&[s, t]| [s, if flip { 1.0 - t } else { t }])
                .collect();
            let a = b.floats(
                &data,
                accessor::Type::Vec2,
                false,
                Some(buffer::Target::ArrayBuffer),
            );
            attributes.insert(Valid(mesh::Semantic::TexCoords(0)), a);
        }
        if let Some(colors) = mesh.colors() {
            let bytes: Vec<u8> = colors.iter().flatten().copied().collect();
            let a = b.accessor(
                &bytes,
                n,
                accessor::ComponentType::U8,
                accessor::Type::Vec4,
                true,
                None,
                Some(buffer::Target::ArrayBuffer),
            );
            attributes.insert(Valid(mesh::Semantic::Colors(0)), a);
        }

        // Every influence, four to a set.
        let mut starts = Vec::with_capacity(n + 1);
        let mut influences = Vec::new();
        for v in 0..n {
            starts.push(influences.len());
            if nb > 0 {
                vertex_weights(
                    mesh.influences(v),
                    options.max_influences,
                    &mut influences,
                    &mut exactness,
                );
            }
        }
        starts.push(influences.len());
        let most = starts.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
        if skin.is_some() {
            for set in 0..most.max(1).div_ceil(4) {
                let mut joints = Vec::with_capacity(n * 4);
                let mut weights = Vec::with_capacity(n * 4);
                for v in 0..n {
                    let own = &influences[starts[v]..starts[v + 1]];
                    for k in set * 4..set * 4 + 4 {
                        let (j, w) = own.get(k).copied().unwrap_or((0, 0.0));
                        joints.push(j);
                        weights.push(w);
                    }
                }
                let (bytes, component) = if joints_u8 {
                    (
                        joints.iter().map(|&j| j as u8).collect::<Vec<u8>>(),
                        accessor::ComponentType::U8,
                    )
                } else {
                    (
                        joints
                            .iter()
                            .flat_map(|&j| (j as u16).to_le_bytes())
                            .collect(),
                        accessor::ComponentType::U16,
                    )
                };
                let j = b.accessor(
                    &bytes,
                    n,
                    component,
                    accessor::Type::Vec4,
                    false,
                    None,
                    Some(buffer::Target::ArrayBuffer),
                );
                let w = b.floats(
                    &weights,
                    accessor::Type::Vec4,
                    false,
                    Some(buffer::Target::ArrayBuffer),
                );
                attributes.insert(Valid(mesh::Semantic::Joints(set as u32)), j);
                attributes.insert(Valid(mesh::Semantic::Weights(set as u32)), w);
            }
        }

        // Counter-clockwise fronts: a reflection of the axes turns every triangle over.
        let indices: Vec<u32> = mesh
            .indices()
            .chunks_exact(3)
            .flat_map(|t| {
                if mirror {
                    [t[0], t[2], t[1]]
                } else {
                    [t[0], t[1], t[2]]
                }
            })
            .collect();
        let (bytes, component) = if n <= u16::MAX as usize {
            (
                indices
                    .iter()
                    .flat_map(|&i| (i as u16).to_le_bytes())
                    .collect::<Vec<u8>>(),
                accessor::ComponentType::U16,
            )
        } else {
            (
                indices.iter().flat_map(|i| i.to_le_bytes()).collect(),
                accessor::ComponentType::U32,
            )
        };
        let index_accessor = b.accessor(
            &bytes,
            indices.len(),
            component,
            accessor::Type::Scalar,
            false,
            None,
            Some(buffer::Target::ElementArrayBuffer),
        );

        let image = options
            .textures
            .and_then(|t| t.mesh_images.get(m).copied().flatten());
        let material = materials.get(&mut b.root, mesh_material(model, m, image));
        let mut mappings: Vec<(u32, Vec<u32>)> = Vec::new();
        if let Some(found) = options.textures {
            for (v, variant) in found.variants.iter().enumerate() {
                let Some(Some(tex)) = variant.meshes.get(m) else {
                    continue;
                };
                let key = MaterialKey {
                    name: tex.name.clone(),
                    image: tex.image,
                    color: None,
                };
                let mat = materials.get(&mut b.root, key).value() as u32;
                match mappings.iter_mut().find(|(mm, _)| *mm == mat) {
                    Some((_, vs)) => vs.push(v as u32),
                    None => mappings.push((mat, vec![v as u32])),
                }
            }
        }
        let primitive_extensions =
            (!mappings.is_empty()).then(|| json::extensions::mesh::Primitive {
                khr_materials_variants: Some(json::extensions::mesh::KhrMaterialsVariants {
                    mappings: mappings
                        .into_iter()
                        .map(|(material, variants)| json::extensions::mesh::Mapping {
                            material,
                            variants,
                        })
                        .collect(),
                }),
            });
        let mesh_index = b.root.push(json::Mesh {
            name: name_of(mesh.name()),
            primitives: vec![mesh::Primitive {
                attributes,
                indices: Some(index_accessor),
                material: Some(material),
                mode: Valid(mesh::Mode::Triangles),
                targets: None,
                extensions: primitive_extensions,
                extras: Default::default(),
            }],
            weights: None,
            extensions: None,
            extras: Default::default(),
        });
        let node = b.root.push(scene::Node {
            name: Some(names.take(&mesh.name().to_string_lossy(), || format!("mesh {m}"))),
            mesh: Some(mesh_index),
            skin,
            extras: match sims.as_mut().map(|s| std::mem::take(&mut s.meshes[m])) {
                Some(e) if !e.is_empty() => extras(Value::Object(e)),
                _ => Default::default(),
            },
            ..Default::default()
        });
        scene_nodes.push(node);
        written.push(Written {
            positions,
            starts,
            influences,
        });
    }

    if skin.is_some() {
        let data: Vec<f32> = inverse_binds.iter().flat_map(column_major).collect();
        let ibm = b.floats(&data, accessor::Type::Mat4, false, None);
        b.root.push(json::Skin {
            name: None,
            inverse_bind_matrices: Some(ibm),
            joints: (0..nb).map(|i| Index::new(i as u32)).collect(),
            skeleton: skeleton_root,
            extensions: None,
            extras: Default::default(),
        });
    }

    if nb > 0 {
        let vitamoo = sims.as_mut().map(|s| std::mem::take(&mut s.animations));
        write_animations(model, &axes, scale, &rest, vitamoo, &mut b)?;
    }

    if let Some(found) = options.textures.filter(|t| !t.variants.is_empty()) {
        b.root.extensions = Some(json::extensions::root::Root {
            khr_materials_variants: Some(json::extensions::root::KhrMaterialsVariants {
                variants: found
                    .variants
                    .iter()
                    .map(
                        |v| json::extensions::scene::khr_materials_variants::Variant {
                            name: v.name.clone(),
                        },
                    )
                    .collect(),
            }),
        });
        b.root
            .extensions_used
            .push("KHR_materials_variants".to_owned());
    }

    measure(
        model,
        &axes,
        scale,
        &inverse_binds,
        &written,
        &mut exactness,
    );

    let scene = b.root.push(json::Scene {
        name: None,
        nodes: scene_nodes,
        extensions: None,
        extras: Default::default(),
    });
    b.root.scene = Some(scene);
    b.root.asset = json::Asset {
        version: "2.0".to_owned(),
        generator: Some(format!("ossa {}", env!("CARGO_PKG_VERSION"))),
        extras: extras(json!({
            "source_format": model.frame_format().name(),
            "source_file": options.source_name,
            "axes": format!("glTF (x, y, z) = {} x native {}", scale, axes.describe()),
            "exactness": {
                "tolerance": super::EXACT_TOLERANCE,
                "size": exactness.size,
                "inexact_vertices": exactness.inexact_vertices,
                "bind_max": exactness.bind_max,
                "animated_max": exactness.animated_max,
                "frames_checked": exactness.frames_checked,
                "frames": exactness.frames,
                "renormalised_vertices": exactness.unnormalised_vertices,
                "worst_weight_sum_error": exactness.worst_weight_sum,
                "capped_vertices": exactness.capped_vertices,
            },
        })),
        ..Default::default()
    };
    let bytes = pack(b, options.binary)?;
    Ok(Export { bytes, exactness })
}

fn unit_normal(n: [f32; 3]) -> [f32; 3] {
    let len = n.iter().map(|c| f64::from(*c).powi(2)).sum::<f64>().sqrt();
    if len > 1e-12 && len.is_finite() {
        n.map(|c| (f64::from(c) / len) as f32)
    } else {
        // A vertex with no normal (a degenerate one) still needs a unit vector.
        [0.0, 1.0, 0.0]
    }
}

fn column_major(m: &Mat3x4) -> [f32; 16] {
    let r = &m.m;
    [
        r[0], r[4], r[8], 0.0, r[1], r[5], r[9], 0.0, r[2], r[6], r[10], 0.0, r[3], r[7], r[11],
        1.0,
    ]
}

/// DMF's textures say whether their rows run bottom-up (three.js' `flipY`); glTF's run top-down.
fn flips_v(model: &Model, material: Option<u32>) -> bool {
    material
        .and_then(|m| model.materials().get(m as usize))
        .and_then(|m| m.texture)
        .and_then(|t| model.textures().get(t as usize))
        .is_some_and(|t| t.flip_y != 0)
}

fn mesh_material(model: &Model, m: usize, image: Option<usize>) -> MaterialKey {
    let mesh = &model.meshes()[m];
    let own = mesh
        .material()
        .and_then(|i| model.materials().get(i as usize));
    let name = match own {
        Some(mat) if !mat.name.is_empty() => mat.name.to_string_lossy(),
        _ if !mesh.shader().is_empty() => mesh.shader().to_string_lossy(),
        _ if !mesh.name().is_empty() => mesh.name().to_string_lossy(),
        _ => "default".to_owned(),
    };
    MaterialKey {
        name,
        image,
        color: own.map(|mat| {
            mat.diffuse.map(|c| {
                if c.is_finite() {
                    c.clamp(0.0, 1.0)
                } else {
                    1.0
                }
            })
        }),
    }
}

/// One channel's keys before it is written.
struct Track {
    node: u32,
    path: animation::Property,
    times: Vec<f32>,
    values: Vec<f32>,
}

fn write_animations(
    model: &Model,
    axes: &Axes,
    scale: f32,
    rest: &[Trs],
    mut vitamoo: Option<Vec<serde_json::Map<String, Value>>>,
    b: &mut Builder,
) -> Result<()> {
    let nb = model.bones().len();
    let keyed: HashMap<u32, usize> = model
        .keyframes()
        .iter()
        .enumerate()
        .map(|(i, k)| (k.animation, i))
        .collect();
    let mut local = vec![Mat3x4::IDENTITY; nb];
    let mut names = UniqueNames::default();
    for (a, scene) in model.animations().iter().enumerate() {
        // A glTF animation needs a channel: a scene without frames (a Sims skill whose numbers
        // are missing) has nothing to give one.
        if scene.frame_count == 0 && !keyed.contains_key(&(a as u32)) {
            continue;
        }
        let mut tracks = match keyed.get(&(a as u32)) {
            Some(&k) => keyed_tracks(model, &model.keyframes()[k], axes, scale),
            None => {
                let mut poses: Vec<Vec<Trs>> = vec![Vec::new(); nb];
                for f in 0..scene.frame_count {
                    let frame = scene.first_frame as usize + f as usize;
                    if !model.skeleton().write_frame_poses(frame, &mut local) {
                        return Err(Error::invalid_argument(format!(
                            "animation {a}: frame {frame} is not a frame of the model"
                        )));
                    }
                    for (bone, l) in local.iter().enumerate() {
                        poses[bone].push(trs(axes, scale, l));
                    }
                }
                // A looping scene returns to its first frame one frame after its last.
                let wrap = scene.looping && scene.frame_count > 1;
                let mut times: Vec<f32> = (0..scene.frame_count)
                    .map(|i| (f64::from(i) / f64::from(scene.fps)) as f32)
                    .collect();
                if wrap {
                    times.push((f64::from(scene.frame_count) / f64::from(scene.fps)) as f32);
                    for p in &mut poses {
                        p.push(p[0]);
                    }
                }
                frame_tracks(&poses, &times, rest)
            }
        };
        if tracks.is_empty() {
            // glTF asks for at least one channel: the first bone held at rest.
            tracks.push(Track {
                node: 0,
                path: animation::Property::Rotation,
                times: vec![0.0],
                values: rest[0].r.to_vec(),
            });
        }
        let mut samplers = Vec::with_capacity(tracks.len());
        let mut channels = Vec::with_capacity(tracks.len());
        let mut inputs: HashMap<Vec<u32>, Index<accessor::Accessor>> = HashMap::new();
        for track in tracks {
            let key: Vec<u32> = track.times.iter().map(|t| t.to_bits()).collect();
            let input = match inputs.get(&key) {
                Some(&i) => i,
                None => {
                    let i = b.floats(&track.times, accessor::Type::Scalar, true, None);
                    inputs.insert(key, i);
                    i
                }
            };
            let type_ = match track.path {
                animation::Property::Rotation => accessor::Type::Vec4,
                _ => accessor::Type::Vec3,
            };
            let output = b.floats(&track.values, type_, false, None);
            let sampler = Index::new(samplers.len() as u32);
            samplers.push(animation::Sampler {
                input,
                interpolation: Valid(animation::Interpolation::Linear),
                output,
                extensions: None,
                extras: Default::default(),
            });
            channels.push(animation::Channel {
                sampler,
                target: animation::Target {
                    node: Index::new(track.node),
                    path: Valid(track.path),
                    extensions: None,
                    extras: Default::default(),
                },
                extensions: None,
                extras: Default::default(),
            });
        }
        let events: Vec<Value> = model
            .animation_events(a as u32)
            .iter()
            .map(|e| {
                let bone = usize::try_from(e.bone)
                    .ok()
                    .and_then(|i| model.bones().get(i))
                    .map(|b| b.name.to_string_lossy());
                json!({
                    "time": e.time,
                    "bone": bone,
                    "key": e.key.to_string_lossy(),
                    "value": e.value.to_string_lossy(),
                })
            })
            .collect();
        let mut info = json!({
            "fps": scene.fps,
            "frames": scene.frame_count,
            "looping": scene.looping,
        });
        if scene.moving || scene.distance != 0.0 {
            info["moving"] = json!(scene.moving);
            info["distance"] = json!(scene.distance * scale);
        }
        if !events.is_empty() {
            info["events"] = Value::Array(events);
        }
        let wanted = scene.name.to_string_lossy();
        let name = names.take(&wanted, || format!("animation {a}"));
        if name != wanted {
            info["name"] = json!(wanted);
        }
        if let (Some(all), Value::Object(map)) = (vitamoo.as_mut(), &mut info) {
            map.append(&mut all[a]);
        }
        b.root.push(json::Animation {
            name: Some(name),
            channels,
            samplers,
            extensions: None,
            extras: extras(info),
        });
    }
    Ok(())
}

/// Per bone and channel, the frames' values; a channel that holds its rest value throughout is
/// left out, one that holds another value throughout is one key.
fn frame_tracks(poses: &[Vec<Trs>], times: &[f32], rest: &[Trs]) -> Vec<Track> {
    let mut tracks = Vec::new();
    for (bone, frames) in poses.iter().enumerate() {
        let r = rest[bone];
        let channel = |get: &dyn Fn(&Trs) -> Vec<f32>| -> Option<(Vec<f32>, Vec<f32>)> {
            let first = get(&frames[0]);
            let constant = frames.iter().all(|f| get(f) == first);
            if constant && first == get(&r) {
                return None;
            }
            if constant {
                return Some((vec![0.0], first));
            }
            Some((times.to_vec(), frames.iter().flat_map(get).collect()))
        };
        if let Some((t, v)) = channel(&|p: &Trs| p.t.to_vec()) {
            tracks.push(Track {
                node: bone as u32,
                path: animation::Property::Translation,
                times: t,
                values: v,
            });
        }
        // Rotations on one hemisphere from key to key, so that each step takes the short way.
        let mut previous = None;
        let hemisphere: Vec<Trs> = frames
            .iter()
            .map(|f| {
                let q = same_hemisphere(Quat::from_array(f.r), previous);
                previous = Some(q);
                Trs {
                    r: q.to_array(),
                    ..*f
                }
            })
            .collect();
        let rot_rest = rest[bone].r;
        let same_rotation = |a: [f32; 4], b: [f32; 4]| a == b || a == b.map(|c| -c);
        let first = hemisphere[0].r;
        let constant = hemisphere.iter().all(|f| f.r == first);
        if !(constant && same_rotation(first, rot_rest)) {
            let (t, v) = if constant {
                (vec![0.0], first.to_vec())
            } else {
                (
                    times.to_vec(),
                    hemisphere.iter().flat_map(|f| f.r).collect(),
                )
            };
            tracks.push(Track {
                node: bone as u32,
                path: animation::Property::Rotation,
                times: t,
                values: v,
            });
        }
        if let Some((t, v)) = channel(&|p: &Trs| p.s.to_vec()) {
            tracks.push(Track {
                node: bone as u32,
                path: animation::Property::Scale,
                times: t,
                values: v,
            });
        }
    }
    tracks
}

/// DMF's own keys, per bone and channel, in time order (of keys at one time the file's last).
fn keyed_tracks(
    model: &Model,
    keyed: &crate::model::KeyedAnimation,
    axes: &Axes,
    scale: f32,
) -> Vec<Track> {
    use crate::model::{KEY_POSITION, KEY_ROTATION, KEY_SCALE};
    let channels = [
        (KEY_POSITION, animation::Property::Translation),
        (KEY_ROTATION, animation::Property::Rotation),
        (KEY_SCALE, animation::Property::Scale),
    ];
    // Each key's (time, index) under its bone and channel, in one pass over the keys.
    let mut grouped: Vec<[Vec<(f32, usize)>; 3]> = vec![Default::default(); model.bones().len()];
    for (i, k) in keyed.keys.iter().enumerate() {
        if let Some(lists) = grouped.get_mut(k.bone as usize) {
            for ((bit, _), list) in channels.iter().zip(lists.iter_mut()) {
                if k.flags & bit != 0 {
                    list.push((k.time, i));
                }
            }
        }
    }
    let mut tracks = Vec::new();
    for (bone, lists) in grouped.into_iter().enumerate() {
        for ((_, path), mut keys) in channels.iter().cloned().zip(lists) {
            if keys.is_empty() {
                continue;
            }
            keys.sort_by(|a, b| a.0.total_cmp(&b.0));
            // Of keys at one time the last in the file wins; glTF's times strictly increase.
            let mut unique: Vec<(f32, usize)> = Vec::with_capacity(keys.len());
            for k in keys {
                match unique.last_mut() {
                    Some(last) if last.0 == k.0 => *last = k,
                    _ => unique.push(k),
                }
            }
            let mut previous = None;
            let mut values = Vec::new();
            for &(_, i) in &unique {
                let k = &keyed.keys[i];
                match path {
                    animation::Property::Translation => {
                        values.extend(axes.vector(k.position.map(|c| c * scale)))
                    }
                    animation::Property::Rotation => {
                        let q = unit_quat(Quat::from_array(axes.rotation(k.rotation)));
                        let q = same_hemisphere(q, previous);
                        previous = Some(q);
                        values.extend(q.to_array());
                    }
                    _ => values.extend(axes.scale(k.scale)),
                }
            }
            tracks.push(Track {
                node: bone as u32,
                path,
                // Key times are finite and from 0 on: the DMF reader refuses others.
                times: unique.iter().map(|k| k.0).collect(),
                values,
            });
        }
    }
    tracks
}

/// The finished document as GLB, or as JSON with the buffer in a data URI.
fn pack(mut b: Builder, binary: bool) -> Result<Vec<u8>> {
    b.bin.resize(b.bin.len().next_multiple_of(4), 0);
    let bin_len = b.bin.len();
    if binary {
        if bin_len > 0 {
            b.root.push(json::Buffer {
                byte_length: USize64(bin_len as u64),
                name: None,
                uri: None,
                extensions: None,
                extras: Default::default(),
            });
        }
        let mut text = json::serialize::to_vec(&b.root)
            .map_err(|e| Error::invalid_argument(format!("glTF JSON: {e}")))?;
        text.resize(text.len().next_multiple_of(4), b' ');
        // Summed in 64 bits: on a 32-bit target the sum itself could wrap.
        let bin_chunk = if bin_len > 0 { 8 + bin_len as u64 } else { 0 };
        let total = 12 + 8 + text.len() as u64 + bin_chunk;
        let Ok(total) = u32::try_from(total) else {
            return Err(Error::limit(format!(
                "the glTF binary would hold {total} bytes; GLB's lengths stop at 4 GiB"
            )));
        };
        let mut out = Vec::with_capacity(total as usize);
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&total.to_le_bytes());
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&text);
        if bin_len > 0 {
            out.extend_from_slice(&(bin_len as u32).to_le_bytes());
            out.extend_from_slice(b"BIN\0");
            out.extend_from_slice(&b.bin);
        }
        Ok(out)
    } else {
        if bin_len > 0 {
            let uri = format!("data:application/octet-stream;base64,{}", base64(&b.bin));
            b.root.push(json::Buffer {
                byte_length: USize64(bin_len as u64),
                name: None,
                uri: Some(uri),
                extensions: None,
                extras: Default::default(),
            });
        }
        json::serialize::to_vec_pretty(&b.root)
            .map_err(|e| Error::invalid_argument(format!("glTF JSON: {e}")))
    }
}

/// Standard base64 with padding (RFC 4648), for the one data URI a `.gltf` carries.
fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | u32::from(c) << (16 - 8 * i));
        let emit = chunk.len() + 1;
        for i in 0..4 {
            if i < emit {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl Model {
    /// [`Model::save`] as glTF with options; the result says what glTF could not express.
    pub fn export_gltf(&self, options: &ExportOptions) -> Result<Export> {
        export(self, options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
        }
    }

    #[test]
    fn weights_merge_bones_sort_cap_and_sum_to_one() {
        let inf = |bone, weight| Influence {
            bone,
            weight,
            ..Default::default()
        };
        let mut e = Exactness::default();
        let mut out = Vec::new();
        vertex_weights(
            &[inf(3, 0.2), inf(1, 0.5), inf(3, 0.1), inf(2, 0.198)],
            0,
            &mut out,
            &mut e,
        );
        assert_eq!(out.iter().map(|x| x.0).collect::<Vec<_>>(), [1, 3, 2]);
        let sum: f64 = out.iter().map(|x| f64::from(x.1)).sum();
        assert!((sum - 1.0).abs() < 1e-7, "{sum}");
        assert_eq!(e.unnormalised_vertices, 1);
        assert!((e.worst_weight_sum - 0.002).abs() < 1e-6);
        out.clear();
        vertex_weights(
            &[inf(0, 0.5), inf(1, 0.3), inf(2, 0.2)],
            2,
            &mut out,
            &mut e,
        );
        assert_eq!(out.len(), 2);
        assert!((out[0].1 - 0.625).abs() < 1e-6 && (out[1].1 - 0.375).abs() < 1e-6);
        assert_eq!((e.capped_vertices, e.most_dropped), (1, 1));
    }
}
