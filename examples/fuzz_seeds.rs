//! Writes the seed corpora of the fuzz targets in `fuzz/`: `DIR/<target>/` for every target,
//! filled with files ossa's own writers make of models built in code (and hand-written files
//! for formats without a writer). `fuzz/run.sh` runs it; the seeds are made afresh each time,
//! never kept in the repository.
//!
//! cargo run --release --example fuzz_seeds -- [DIR]     (default target/fuzz-seeds)

#[path = "../fuzz/src/samples.rs"]
mod samples;

use std::path::Path;

use ossa::Format;
use samples::{
    Sample, bind_input, join_two, load_file_seeds, pose_skin_seeds, samples, skill_cfp,
    skill_file_bytes,
};

/// The load targets and the format each forces.
const LOAD_TARGETS: [(&str, Format); 14] = [
    ("load_auto", Format::Auto),
    ("load_dpm", Format::Dpm),
    ("load_skm", Format::Skm),
    ("load_skp", Format::Skp),
    ("load_skn", Format::SimsSkn),
    ("load_bmf", Format::SimsBmf),
    ("load_msh", Format::SimsMsh),
    ("load_cmx", Format::SimsCmx),
    ("load_bcf", Format::SimsBcf),
    ("load_mm2_skel", Format::Mm2Skel),
    ("load_mm2_mod", Format::Mm2Mod),
    ("load_dmf", Format::Dmf),
    ("load_dmf_json", Format::DmfJson),
    ("load_iqm", Format::Iqm),
];

fn write_all(dir: &Path, target: &str, seeds: &[(String, Vec<u8>)]) -> std::io::Result<()> {
    let dir = dir.join(target);
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    for (name, bytes) in seeds {
        std::fs::write(dir.join(name), bytes)?;
    }
    println!("{target}: {} seeds", seeds.len());
    Ok(())
}

/// A file name that says where the seed came from.
fn named(samples: &[Sample]) -> Vec<(String, Vec<u8>)> {
    samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let format = s.format.name().replace(' ', "-").to_lowercase();
            (format!("{i:02}-{}-{format}", s.origin), s.bytes.clone())
        })
        .collect()
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/fuzz-seeds".to_owned());
    let dir = Path::new(&dir);
    let all = samples();
    for (target, format) in LOAD_TARGETS {
        let of_format: Vec<Sample> = all
            .iter()
            .filter(|s| format == Format::Auto || s.format == format)
            .cloned()
            .collect();
        write_all(dir, target, &named(&of_format))?;
    }

    // glTF: the export of every sample model.
    #[cfg(feature = "gltf")]
    for (target, binary) in [("load_glb", true), ("load_gltf", false)] {
        let options = ossa::format::gltf::ExportOptions {
            binary,
            ..Default::default()
        };
        let seeds: Vec<(String, Vec<u8>)> = samples::models()
            .iter()
            .filter_map(|(origin, m)| {
                let e = m.export_gltf(&options).ok()?;
                Some((format!("{origin}-export"), e.bytes))
            })
            .collect();
        write_all(dir, target, &seeds)?;
    }

    // Meshes with the skeleton they bind to: every pairing of a meshes sample with a skeleton
    // sample of the same engine.
    let pairs = [
        (Format::Skm, Format::Skp),
        (Format::SimsSkn, Format::SimsCmx),
        (Format::SimsBmf, Format::SimsBcf),
        (Format::SimsSkn, Format::SimsBcf),
        (Format::Mm2Mod, Format::Mm2Skel),
    ];
    let mut bind = Vec::new();
    for (mesh_format, skeleton_format) in pairs {
        for m in all.iter().filter(|s| s.format == mesh_format) {
            for s in all
                .iter()
                .filter(|s| s.format == skeleton_format && s.origin != "skill")
            {
                let name = format!("{:02}-{}-{}", bind.len(), m.origin, s.origin);
                bind.push((
                    name,
                    bind_input(mesh_format, &m.bytes, skeleton_format, &s.bytes),
                ));
            }
        }
    }
    write_all(dir, "bind", &bind)?;

    // Render: every sample after four bytes of options (35x15 pixels, three-quarter, bones,
    // frame 1).
    let render: Vec<(String, Vec<u8>)> = named(&all)
        .into_iter()
        .map(|(name, bytes)| (name, [&[0x5f, 8, 1, 0][..], &bytes].concat()))
        .collect();
    write_all(dir, "render", &render)?;

    // The engine rules: every IQM sample for each engine, as a player model with a config of
    // Warfork's 49 anims, and each of the other samples once.
    let cfg: String = (0..49).map(|k| format!("{k} {k} 0 20\n")).collect();
    let mut engines = Vec::new();
    for (name, bytes) in named(&all) {
        let picks: &[u8] = if name.ends_with("-iqm") {
            &[0, 1, 2, 3, 7]
        } else {
            &[0]
        };
        for &pick in picks {
            engines.push((
                format!("{name}-{pick}"),
                [&[pick][..], &join_two(&bytes, cfg.as_bytes())].concat(),
            ));
        }
    }
    write_all(dir, "engines", &engines)?;

    let pose_skin: Vec<(String, Vec<u8>)> = pose_skin_seeds()
        .into_iter()
        .enumerate()
        .map(|(i, s)| (format!("model{i}"), s))
        .collect();
    write_all(dir, "pose_skin", &pose_skin)?;

    let cfps = [
        ("exact".to_owned(), skill_cfp(false)),
        ("lossy".to_owned(), skill_cfp(true)),
        (
            "ramp".to_owned(),
            ossa::cfp::encode_lossy(
                &(0..200)
                    .map(|i| (i as f32 * 0.01).sin())
                    .collect::<Vec<_>>(),
                0.0005,
            ),
        ),
    ];
    write_all(dir, "cfp", &cfps)?;

    // The skill file as CMX and as BCF, each with its exact and its lossy CFP; the first byte
    // is the target's flags (bit 0: strict; the format detected).
    let mut skills = Vec::new();
    for (binary, encoding) in [(false, "cmx"), (true, "bcf")] {
        for (lossy, cfp) in [(false, "exact"), (true, "lossy")] {
            let mut input = vec![u8::from(lossy)];
            input.extend(join_two(&skill_file_bytes(binary), &skill_cfp(lossy)));
            skills.push((format!("{encoding}-{cfp}"), input));
        }
    }
    write_all(dir, "skills", &skills)?;

    write_all(dir, "load_file", &load_file_seeds())?;

    // Every sample after a byte of optimisation flags: all of them, and each alone.
    let mut optimize_save = Vec::new();
    for (name, bytes) in named(&all) {
        for flags in [7u8, 1, 2, 4] {
            let mut input = vec![flags];
            input.extend_from_slice(&bytes);
            optimize_save.push((format!("{flags}-{name}"), input));
        }
    }
    write_all(dir, "optimize_save", &optimize_save)?;
    Ok(())
}
