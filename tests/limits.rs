//! `LoadOptions::max_bytes` is honoured by every format ossa reads: a model that needs more
//! memory than the caller allows is refused with `ErrorCode::Limit`, before it is built, and the
//! same bytes load under the default limit.

use ossa::synth::TubeRig;
use ossa::{ErrorCode, Format, LoadOptions, Model, cmx, dpm, sims_mesh, sims_msh, skm};

/// A Sims skin: one bone, one triangle of three vertices, no blends.
const SKN: &str = "tri\r\nx\r\n1\r\nROOT\r\n1\r\n0 1 2\r\n1\r\n0 0 3 -1 0\r\n3\r\n0 0\r\n1 0\r\n\
                   0 1\r\n0\r\n3\r\n0 0 0 0 0 1\r\n1 0 0 0 0 1\r\n0 1 0 0 0 1\r\n";

/// A Sims skeleton of two bones, in the version 200 layout.
const CMX: &str = "version 200\n1\npair\n2\nROOT\nNULL\n| 0 3 0 |\n| 0 0 0 1 |\n1\n1\nHEAD\nROOT\n\
                   | 0 1 0 |\n| 0 0.7071068 0 0.7071068 |\n0\n1\n0\n0\n";

fn options(format: Format, max_bytes: u64) -> LoadOptions<'static> {
    LoadOptions {
        format,
        max_bytes,
        ..LoadOptions::default()
    }
}

/// Bytes of every format, each written or stated by the test itself.
fn files() -> Vec<(Format, Vec<u8>)> {
    let rig = TubeRig::with_vertices(600).build().unwrap();
    let skin = Model::load(SKN.as_bytes(), &options(Format::SimsSkn, 0)).unwrap();
    let skeleton = Model::load(CMX.as_bytes(), &options(Format::SimsCmx, 0)).unwrap();
    vec![
        (Format::Dpm, dpm::write(&rig).unwrap()),
        (Format::Skm, skm::write_skm(&rig).unwrap()),
        (Format::Skp, skm::write_skp(&rig).unwrap()),
        (Format::SimsSkn, SKN.as_bytes().to_vec()),
        (Format::SimsBmf, sims_mesh::write_bmf(&skin).unwrap()),
        (Format::SimsMsh, sims_msh::write_msh(&skin).unwrap()),
        (Format::SimsCmx, CMX.as_bytes().to_vec()),
        (Format::SimsBcf, cmx::write_bcf(&skeleton).unwrap()),
    ]
}

#[test]
fn every_format_refuses_a_model_over_the_memory_limit() {
    let files = files();
    assert_eq!(files.len(), 8);
    for (format, bytes) in &files {
        let model = Model::load(bytes, &options(*format, 0))
            .unwrap_or_else(|e| panic!("{}: {e}", format.name()));
        assert_eq!(model.format(), *format);
        let heap = model.heap_bytes() as u64;
        assert!(heap > 64, "{}: {heap} bytes", format.name());

        // Far below what the model holds, and just 1 byte.
        for max_bytes in [heap / 4, 1] {
            let e = Model::load(bytes, &options(*format, max_bytes)).unwrap_err();
            assert_eq!(
                e.code(),
                ErrorCode::Limit,
                "{} with max_bytes {max_bytes}: {e}",
                format.name()
            );
            assert!(
                e.to_string()
                    .contains(&format!("limit of {max_bytes} bytes")),
                "{}: {e}",
                format.name()
            );
        }

        // A limit with room to spare loads the same model.
        let again = Model::load(bytes, &options(*format, heap * 4)).unwrap();
        assert_eq!(again.info(), model.info(), "{}", format.name());
    }
}

#[test]
fn a_refusal_names_what_the_model_needs() {
    // The estimate in the message is above the limit, loads when given as the limit, and is
    // close to what the loaded model holds.
    let rig = TubeRig::with_vertices(2000).build().unwrap();
    let bytes = dpm::write(&rig).unwrap();
    let e = Model::load(&bytes, &options(Format::Dpm, 4096)).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Limit);
    let needed: u64 = e
        .to_string()
        .split("needs ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no estimate in {e}"));
    assert!(needed > 4096, "{e}");
    let model = Model::load(&bytes, &options(Format::Dpm, needed)).unwrap();
    assert!(
        model.heap_bytes() as u64 <= needed * 2,
        "{needed}: {}",
        model.heap_bytes()
    );
}
