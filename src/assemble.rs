//! Putting a character together from the files it comes in.
//!
//! A Sims character is a skeleton (`adult-skeleton.cmx`), a suit that lists which meshes the
//! character wears (`b001mafit_01.cmx`: `xskin-b001mafit_01-PELVIS-BODY` on PELVIS, ...) and the
//! meshes themselves (`xskin-b001mafit_01-PELVIS-BODY.skn`), each of which names its bones and
//! waits for a skeleton. [`dress`] binds every mesh a suit lists to the skeleton and gives one
//! model; [`merge_meshes`] is its last step, for meshes already bound to one skeleton.
//!
//! Finding the files is the caller's: [`dress`] asks a callback for each mesh by name, so that a
//! program can look beside the suit, in search directories, or in an archive.

#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{BoneSlots, Mesh, MeshParts, Model, Name, Suit};
use crate::name_index::NameIndex;

/// The suits of `suits_from` added to `skeleton`, which keeps its own (a suit of the same name,
/// ignoring ASCII case, is not added twice): for a suit file that lists outfits but has no
/// skeleton of its own, so that [`dress`] gets one character holding both.
pub fn with_suits(skeleton: &Model, suits: &[Suit]) -> Result<Model> {
    let mut parts = skeleton.to_parts();
    for suit in suits {
        if find_suit(&parts.suits, suit.name.as_bytes()).is_none() {
            parts.suits.push(suit.clone());
        }
    }
    // to_parts leaves the warnings out; the skeleton's still apply to the character.
    parts.warnings = skeleton.warnings().iter().map(|w| w.to_string()).collect();
    Model::from_parts(parts)
}

/// The character wearing the suit named `suit` (ASCII case ignored) of `character.suits()`: each
/// skin's mesh, given by `find_mesh(mesh_name)` (a model whose meshes wait for a skeleton, as a
/// Sims SKN, BMF or MSH loads; an MSH hangs on the skin's bone, which it does not name itself),
/// bound to the character's skeleton with [`Model::bind`], and all of
/// them made one model with [`merge_meshes`]: the skeleton, its frames and scenes, the
/// character's suits, and the meshes in the order the suit lists its skins, with their names.
///
/// A skin whose mesh hangs on a bone the skeleton lacks (an `.msh` on the skin's bone, an SKN
/// or BMF on the bones it names; matched ignoring ASCII case, as binding matches them) is left
/// out, with a warning on the result naming the suit, the skin (its position and bone), the
/// mesh and the missing bones: no other bone stands in for a missing one.
///
/// Errors: `NotFound` when the character has no such suit (naming the suits it has);
/// `Mismatch` when the character has no skeleton, or when every skin is left out (naming what
/// each lacks); `InvalidArgument` for a suit without skins. A mesh that cannot be found, loaded
/// or bound keeps its error's code, its message prefixed with the suit, the skin (its position
/// and bone) and the mesh's name.
pub fn dress(
    character: &Model,
    suit: &str,
    find_mesh: &mut dyn FnMut(&str) -> Result<Model>,
) -> Result<Model> {
    dress_parts(character, suit, find_mesh).map(|d| d.model)
}

/// What [`dress_parts`] gives: the dressed character, and which skin each of its meshes is.
#[derive(Debug)]
pub struct Dressed {
    pub model: Model,
    /// Per mesh of `model`, its skin's position in the suit's skins: `find_mesh` is asked for
    /// skin `k`'s mesh as its `k`-th call, so a caller that keeps where each was found knows
    /// where each mesh came from (its textures are beside it).
    pub mesh_skins: Vec<usize>,
}

/// [`dress`], telling which skin each mesh of the character is (skins left out have none).
pub fn dress_parts(
    character: &Model,
    suit: &str,
    find_mesh: &mut dyn FnMut(&str) -> Result<Model>,
) -> Result<Dressed> {
    let Some(outfit) = find_suit(character.suits(), suit.as_bytes()) else {
        let names: Vec<String> = character
            .suits()
            .iter()
            .map(|s| s.name.to_string())
            .collect();
        return Err(Error::not_found(if names.is_empty() {
            format!("no suit named {suit:?}: the character has no suits")
        } else {
            format!(
                "no suit named {suit:?}: the character has {}",
                names.join(", ")
            )
        }));
    };
    if character.unbound().is_some() || character.bones().is_empty() {
        return Err(Error::mismatch(format!(
            "suit {}: the character has no skeleton to dress",
            outfit.name
        )));
    }
    if outfit.skins.is_empty() {
        return Err(Error::invalid_argument(format!(
            "suit {} lists no skins",
            outfit.name
        )));
    }
    let bones = character.bones();
    let bone_name = |i: usize| bones.get(i).map_or(&[][..], |b| b.name.as_bytes());
    let bone_index = NameIndex::build_ignoring_case(bones.len(), bone_name);
    let mut worn = Vec::with_capacity(outfit.skins.len());
    let mut mesh_skins = Vec::with_capacity(outfit.skins.len());
    let mut left_out = Vec::new();
    for (k, skin) in outfit.skins.iter().enumerate() {
        let mesh_name = skin.mesh.to_string();
        let place = || {
            format!(
                "suit {} skin {k} (mesh {mesh_name} on bone {})",
                outfit.name, skin.bone
            )
        };
        let mesh = find_mesh(&mesh_name).map_err(|e| e.within(place()))?;
        let mesh = on_skin_bone(mesh, &skin.bone).map_err(|e| e.within(place()))?;
        // A finder may hand back a mesh it bound to this very skeleton already.
        let bound = if mesh.unbound().is_none() && mesh.shares_skeleton(character) {
            mesh
        } else {
            let missing: Vec<String> = match mesh.unbound() {
                Some(BoneSlots::ByName(names)) => (names.iter())
                    .filter(|n| !n.is_empty())
                    .filter(|n| bone_index.find(n.as_bytes(), bone_name).is_none())
                    .map(|n| format!("{:?}", n.to_string()))
                    .collect(),
                _ => Vec::new(),
            };
            if !missing.is_empty() {
                let bones = if missing.len() == 1 { "bone" } else { "bones" };
                left_out.push(format!(
                    "{}: the skeleton has no {bones} named {}: the part is left out",
                    place(),
                    missing.join(", ")
                ));
                continue;
            }
            Model::bind(&mesh, character).map_err(|e| e.within(place()))?
        };
        mesh_skins.extend(std::iter::repeat_n(k, bound.meshes().len()));
        worn.push(bound);
    }
    if worn.is_empty() {
        return Err(Error::mismatch(format!(
            "suit {}: no skin fits the skeleton: {}",
            outfit.name,
            left_out.join("; ")
        )));
    }
    Ok(Dressed {
        model: merge_meshes(&worn)?.with_warnings(left_out),
        mesh_skins,
    })
}

/// `mesh` hung on `bone` when it is a 1998 Sims `.msh`, which does not hold the name of its bone:
/// the suit's skin names it. (Its file name, `xskin-SUIT-BONE-PART`, repeats it, but suit and
/// part names hold `-` too.) Any other mesh is returned as it is.
pub(crate) fn on_skin_bone(mesh: Model, bone: &Name) -> Result<Model> {
    match mesh.unbound() {
        Some(BoneSlots::ByName(names))
            if mesh.format() == Format::SimsMsh
                && names.as_slice() != std::slice::from_ref(bone) =>
        {
            let mut parts = mesh.to_parts();
            parts.unbound = Some(BoneSlots::ByName(vec![bone.clone()]));
            parts.warnings = mesh.warnings().iter().map(|w| w.to_string()).collect();
            Model::from_parts(parts)
        }
        _ => Ok(mesh),
    }
}

/// One model of several bound to one skeleton (in memory: [`Model::shares_skeleton`]): the first
/// model with every other one's meshes appended, in order and with their names; their textures
/// and materials are appended too, each mesh's material renumbered to follow. The first
/// model's format, axes and suits are the result's; a declared extent is kept only from a lone
/// model (one mesh's is not the whole's); warnings are gathered, each once.
///
/// Errors: `InvalidArgument` for no models or one whose meshes wait for a skeleton; `Mismatch`
/// for models on different skeletons.
pub fn merge_meshes(models: &[Model]) -> Result<Model> {
    let Some(first) = models.first() else {
        return Err(Error::invalid_argument("no models to merge"));
    };
    for (k, model) in models.iter().enumerate() {
        if model.unbound().is_some() {
            return Err(Error::invalid_argument(format!(
                "model {k}: its meshes wait for a skeleton: bind them before merging"
            )));
        }
        if !model.shares_skeleton(first) {
            return Err(Error::mismatch(format!(
                "model {k} is bound to another skeleton than model 0"
            )));
        }
    }
    let mut parts = first.to_parts();
    let mut warnings: Vec<String> = Vec::new();
    let mut note = |model: &Model| {
        for w in model.warnings() {
            let w = w.to_string();
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    };
    note(first);
    if models.len() > 1 {
        parts.extent = None;
    }
    for (k, model) in models.iter().enumerate().skip(1) {
        let too_many = || Error::limit(format!("model {k}: too many materials"));
        let texture_base = u32::try_from(parts.textures.len()).map_err(|_| too_many())?;
        let material_base = u32::try_from(parts.materials.len()).map_err(|_| too_many())?;
        parts.textures.extend(model.textures().iter().cloned());
        for material in model.materials() {
            let mut material = material.clone();
            material.texture = match material.texture {
                Some(t) => Some(t.checked_add(texture_base).ok_or_else(too_many)?),
                None => None,
            };
            parts.materials.push(material);
        }
        for mesh in model.meshes() {
            let mut mesh = mesh_parts(mesh);
            mesh.material = match mesh.material {
                Some(m) => Some(m.checked_add(material_base).ok_or_else(too_many)?),
                None => None,
            };
            parts.meshes.push(mesh);
        }
        note(model);
    }
    parts.warnings = warnings;
    Model::from_parts(parts)
}

/// The suit named `name`, ignoring ASCII case as the game does.
fn find_suit<'a>(suits: &'a [Suit], name: &[u8]) -> Option<&'a Suit> {
    suits
        .iter()
        .find(|s| s.name.as_bytes().eq_ignore_ascii_case(name))
}

/// A mesh as parts, from what it shows: without [`Model::to_parts`], which would copy the whole
/// skeleton (every frame's poses) for each model merged.
fn mesh_parts(mesh: &Mesh) -> MeshParts {
    let n = mesh.vertex_count();
    let mut influence_start = Vec::with_capacity(n.saturating_add(1));
    let mut start = 0u32;
    influence_start.push(start);
    for v in 0..n {
        // The mesh was checked when it was built: its influence count fits its u32 starts.
        start = start.saturating_add(u32::try_from(mesh.influences(v).len()).unwrap_or(u32::MAX));
        influence_start.push(start);
    }
    MeshParts {
        name: mesh.name().clone(),
        shader: mesh.shader().clone(),
        influence_start,
        influences: mesh.all_influences().to_vec(),
        indices: mesh.indices().to_vec(),
        texcoords: mesh.texcoords().map(<[_]>::to_vec),
        group_ids: mesh.group_ids().map(<[_]>::to_vec),
        references: mesh.references().map(<[_]>::to_vec),
        material: mesh.material(),
        colors: mesh.colors().map(<[_]>::to_vec),
        bind_positions: mesh.bind_positions().map(<[_]>::to_vec),
        bind_normals: mesh.bind_normals().map(<[_]>::to_vec),
        msh: mesh.msh().cloned(),
        skins: mesh.skins().to_vec(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::format::{Format, LoadOptions};
    use crate::model::Material;

    /// A two-bone skeleton (ROOT at y 3, HEAD 2 above it) with two suits: `Nerd` wears a body on
    /// ROOT and a head on HEAD; `hat-only` a mesh no file holds.
    const CHARACTER: &str = "// Character File. Copyright 1997, Maxis Inc.
version 300
1
small
2
ROOT
NULL
0
| 0 3 0 |
| 0 0 0 1 |
1
1
0
0
0
HEAD
ROOT
0
| 0 2 0 |
| 0 0 0 1 |
0
1
1
0
0
2
Nerd
0
0
2
ROOT
body-mesh
0
0
HEAD
head-mesh
0
0
hat-only
0
0
1
HEAD
hat-mesh
0
0
0
";

    /// A mesh of one triangle on `bone`, in its space, the first vertex at its joint.
    fn skn(name: &str, bone: &str) -> String {
        format!(
            "{name}
x
1
{bone}
1
0 1 2
1
0 0 3 -1 0
3
0 0
1 0
0 1
0
3
0 0 0 0 0 1
1 0 0 0 0 1
0 1 0 0 0 1
"
        )
    }

    fn load(text: &str, format: Format) -> Model {
        Model::load(
            text.as_bytes(),
            &LoadOptions {
                format,
                ..LoadOptions::default()
            },
        )
        .unwrap()
    }

    fn character() -> Model {
        load(CHARACTER, Format::SimsCmx)
    }

    /// Finds `body-mesh` on ROOT and `head-mesh` on HEAD; any other name is not found.
    fn finder(asked: &mut Vec<String>) -> impl FnMut(&str) -> Result<Model> + '_ {
        move |name: &str| {
            asked.push(name.to_owned());
            match name {
                "body-mesh" => Ok(load(&skn(name, "ROOT"), Format::SimsSkn)),
                "head-mesh" => Ok(load(&skn(name, "HEAD"), Format::SimsSkn)),
                "ghost-mesh" => Ok(load(&skn(name, "TAIL"), Format::SimsSkn)),
                _ => Err(Error::not_found(format!("no file holds {name}"))),
            }
        }
    }

    #[test]
    fn a_dressed_character_is_the_skeleton_with_every_skin_bound() {
        let character = character();
        let mut asked = Vec::new();
        // Suit names ignore case, as the game's do.
        let dressed = dress(&character, "NERD", &mut finder(&mut asked)).unwrap();
        assert_eq!(asked, ["body-mesh", "head-mesh"]);
        let names: Vec<String> = dressed
            .meshes()
            .iter()
            .map(|m| m.name().to_string())
            .collect();
        assert_eq!(names, ["body-mesh", "head-mesh"]);
        assert_eq!(dressed.bones(), character.bones());
        assert_eq!(dressed.frames().len(), character.frames().len());
        assert_eq!(dressed.suits(), character.suits());
        assert!(dressed.unbound().is_none());
        // Each mesh's influences index the skeleton: the body's first vertex sits at ROOT's
        // joint (y 3), the head's at HEAD's (y 3 + 2).
        assert_eq!(dressed.meshes()[0].influences(0)[0].bone, 0);
        assert_eq!(dressed.meshes()[1].influences(0)[0].bone, 1);
        let (mins, maxs) = dressed.bounds();
        assert_eq!((mins[1], maxs[1]), (3.0, 6.0));
    }

    #[test]
    fn a_missing_suit_names_the_suits_there_are() {
        let e = dress(&character(), "b001mafit_01", &mut finder(&mut Vec::new())).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert_eq!(
            e.to_string(),
            "no suit named \"b001mafit_01\": the character has Nerd, hat-only"
        );
    }

    #[test]
    fn a_skin_that_fails_names_the_suit_the_skin_and_the_mesh() {
        let e = dress(&character(), "hat-only", &mut finder(&mut Vec::new())).unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert_eq!(
            e.to_string(),
            "suit hat-only skin 0 (mesh hat-mesh on bone HEAD): no file holds hat-mesh"
        );
        // Found but on a bone the skeleton lacks, and the suit's only skin: nothing to wear.
        let mut parts = character().to_parts();
        parts.suits[1].skins[0].mesh = "ghost-mesh".into();
        let character = Model::from_parts(parts).unwrap();
        let e = dress(&character, "hat-only", &mut finder(&mut Vec::new())).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Mismatch);
        assert_eq!(
            e.to_string(),
            "suit hat-only: no skin fits the skeleton: suit hat-only skin 0 (mesh ghost-mesh on \
             bone HEAD): the skeleton has no bone named \"TAIL\": the part is left out"
        );
    }

    #[test]
    fn a_skin_on_a_bone_the_skeleton_lacks_is_left_out_with_a_warning() {
        let mut parts = character().to_parts();
        let head = parts.suits[0].skins[1].clone();
        parts.suits[0].skins.insert(1, head);
        parts.suits[0].skins[1].mesh = "ghost-mesh".into();
        let character = Model::from_parts(parts).unwrap();
        let mut asked = Vec::new();
        let dressed = dress(&character, "Nerd", &mut finder(&mut asked)).unwrap();
        assert_eq!(asked, ["body-mesh", "ghost-mesh", "head-mesh"]);
        let names: Vec<String> = (dressed.meshes().iter())
            .map(|m| m.name().to_string())
            .collect();
        assert_eq!(names, ["body-mesh", "head-mesh"]);
        let parts = dress_parts(&character, "Nerd", &mut finder(&mut Vec::new())).unwrap();
        assert_eq!(parts.mesh_skins, [0, 2]);
        let warnings: Vec<String> = dressed.warnings().iter().map(|w| w.to_string()).collect();
        assert_eq!(
            warnings,
            [
                "suit Nerd skin 1 (mesh ghost-mesh on bone HEAD): the skeleton has no bone named \
              \"TAIL\": the part is left out"
            ]
        );
    }

    #[test]
    fn a_character_without_a_skeleton_cannot_be_dressed() {
        let mut parts = character().to_parts();
        parts.bones.clear();
        parts.frames.clear();
        parts.poses = Default::default();
        let suits_only = Model::from_parts(parts).unwrap();
        let e = dress(&suits_only, "Nerd", &mut finder(&mut Vec::new())).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Mismatch, "{e}");
        // With a skeleton added, the same suits dress it.
        let mut skeleton = character().to_parts();
        skeleton.suits.clear();
        let skeleton = Model::from_parts(skeleton).unwrap();
        let character = with_suits(&skeleton, suits_only.suits()).unwrap();
        assert_eq!(character.suits(), suits_only.suits());
        let dressed = dress(&character, "Nerd", &mut finder(&mut Vec::new())).unwrap();
        assert_eq!(dressed.meshes().len(), 2);
    }

    /// `skn(name, bone)` with its own material (a texture at `texture`), bound to `skeleton`.
    fn with_material(skeleton: &Model, name: &str, texture: Option<u32>) -> Model {
        let mut parts = load(&skn(name, "HEAD"), Format::SimsSkn).to_parts();
        parts.materials = vec![
            Material::default(),
            Material {
                name: name.into(),
                texture,
                ..Material::default()
            },
        ];
        if texture.is_some() {
            parts.textures = vec![crate::model::Texture::default(); 2];
        }
        parts.meshes[0].material = Some(1);
        Model::bind(&Model::from_parts(parts).unwrap(), skeleton).unwrap()
    }

    #[test]
    fn merged_meshes_keep_their_own_materials_and_textures() {
        let skeleton = character();
        let a = with_material(&skeleton, "a", Some(1));
        let b = with_material(&skeleton, "b", Some(0));
        let merged = merge_meshes(&[a, b]).unwrap();
        assert_eq!(merged.textures().len(), 4);
        let materials = merged.materials();
        assert_eq!(materials.len(), 4);
        for (m, (name, texture)) in merged.meshes().iter().zip([("a", 1), ("b", 2)]) {
            let material = &materials[m.material().unwrap() as usize];
            assert_eq!(material.name.to_string(), name);
            assert_eq!(material.texture, Some(texture));
        }
        assert_eq!(merged.bones(), skeleton.bones());
    }

    #[test]
    fn merging_refuses_other_skeletons_unbound_meshes_and_nothing() {
        let one = character();
        let other = character();
        let a = with_material(&one, "a", None);
        let b = with_material(&other, "b", None);
        assert_eq!(
            merge_meshes(&[a, b]).unwrap_err().code(),
            ErrorCode::Mismatch
        );
        let unbound = load(&skn("u", "HEAD"), Format::SimsSkn);
        assert_eq!(
            merge_meshes(&[unbound]).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            merge_meshes(&[]).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
}
