//! What the CLI tests share: a temporary directory per test, running the built `ossa` binary in
//! it, a rig built in code as DPM bytes, and the corpus directory or a plain skip.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ossa::synth::TubeRig;

use crate::corpus::corpus_dir;

/// A directory of its own under the system's temporary directory, removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `group` keeps two test files' directories apart, `test` two tests'.
    pub fn new(group: &str, test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("ossa-{group}-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }

    /// Writes `rel`, making its directories.
    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }

    /// The files of `rel`, sorted.
    pub fn listing(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a run of `ossa` gave.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The stdout line that starts with `start` once its leading spaces are off.
    pub fn line(&self, start: &str) -> &str {
        self.stdout
            .lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no line starting {start:?} in\n{}", self.stdout))
    }
}

/// Runs `ossa args...` in `dir`, and prints what it gave for a failing test's log.
pub fn ossa(dir: impl AsRef<Path>, args: &[&str]) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    eprintln!(
        "$ ossa {}\nexit {}\n{}{}",
        args.join(" "),
        run.code,
        run.stdout,
        run.stderr
    );
    run
}

/// A tube of `bones` bones (a chain, each the child of the one before) built in code, as DPM.
pub fn tube_dpm(bones: u32) -> Vec<u8> {
    let rig = TubeRig {
        bones,
        ..TubeRig::default()
    };
    ossa::dpm::write(&rig.build().unwrap()).unwrap()
}

/// The corpus's `kind` directory, or `None` after saying the test skips.
pub fn corpus(kind: &str) -> Option<PathBuf> {
    let dir = corpus_dir().join(kind);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipped: corpus absent ({})", dir.display());
        None
    }
}

/// `ossa ARGS` in `dir` with its output into `out`: the exit code and the child's peak resident
/// memory in bytes (its own, from wait4, not other tests' children).
// The child is reaped by wait4, which clippy does not know for a wait.
#[allow(clippy::zombie_processes)]
pub fn ossa_peak(dir: &Path, args: &[&str], out: &Path) -> (i32, u64) {
    let child = Command::new(env!("CARGO_BIN_EXE_ossa"))
        .args(args)
        .current_dir(dir)
        .stdout(std::fs::File::create(out).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child's, not yet waited for; status and usage are writable.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage.ru_maxrss as u64 * 1024)
}
