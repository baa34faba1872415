//! Checking a Sims character across its files, as `ossa validate FILE --skeleton --suit --skills
//! --search` does: every problem of every file it refers to, file by file.

use std::ffi::c_char;
use std::path::PathBuf;

use crate::character::{CharacterCheck, check_character};
use crate::error::{Error, Result};

use super::checks::{c_str, guard, null, ossa_error};
use super::load::{os_path, ossa_load_options, read_options};
use super::validate::fill;

/// What a Sims character is checked with besides its file: all optional (NULL, 0) but `size`.
#[repr(C)]
pub struct ossa_character {
    /// sizeof(ossa_character): the struct only grows at its end, and only the sizes of its
    /// released layouts are accepted (this one), any other is OSSA_ERR_INVALID_ARGUMENT
    pub size: u32,
    /// the skeleton's file (adult-skeleton.cmx); NULL = the character file's own skeleton
    pub skeleton: *const c_char,
    /// the suit to check: the character file's, else SUIT.cmx, SUIT.cmx.bcf or SUIT.bcf beside
    /// it or in a search directory; NULL = none
    pub suit: *const c_char,
    /// `skill_count` character files (CMX, BCF) whose skills are checked on the skeleton, each
    /// with its numbers (CFP, a 1998 file's .bin) beside it; NULL when skill_count is 0
    pub skills: *const *const c_char,
    pub skill_count: usize,
    /// `search_count` more directories for suit and mesh files, after the character file's own;
    /// NULL when search_count is 0
    pub search: *const *const c_char,
    pub search_count: usize,
}

/// One problem of a character, in the file it belongs to.
#[repr(C)]
pub struct ossa_problem {
    /// its ossa_error_code (OSSA_ERR_NOT_FOUND: a file not found; OSSA_ERR_MISMATCH: files that
    /// do not fit together; ...)
    pub code: u32,
    /// 1-based line in a text file, 0 when not applicable
    pub line: u32,
    /// byte offset in the file, UINT64_MAX when not applicable
    pub offset: u64,
    /// NUL-terminated: the file the problem is in, as given or as found (a directory given
    /// joined with the file's name)
    pub file: [c_char; 256],
    /// NUL-terminated sentence, as `ossa validate` prints it: which suit, skin, mesh, texture
    /// or skill, what is wrong, and where that was looked for
    pub message: [c_char; 512],
}

/// `count` strings at `list` as paths; NULL with a count is a null argument.
fn paths(list: *const *const c_char, count: usize, what: &str) -> Result<Vec<PathBuf>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    if list.is_null() {
        return Err(null(what));
    }
    (0..count)
        .map(|k| {
            // SAFETY: the caller's array holds `count` pointers (checked non-null above).
            let p = unsafe { list.add(k).read_unaligned() };
            c_str(p)
                .map(os_path)
                .ok_or_else(|| null(&format!("{what}[{k}]")))
        })
        .collect()
}

fn read_character(character: *const ossa_character) -> Result<CharacterCheck> {
    if character.is_null() {
        return Ok(CharacterCheck::default());
    }
    // SAFETY: checked non-null; every layout starts with its size, which is read first so that
    // no more is read than the caller's layout holds.
    let size = unsafe { character.cast::<u32>().read_unaligned() };
    if size as usize != size_of::<ossa_character>() {
        return Err(Error::invalid_argument(format!(
            "character->size is {size}, not sizeof(ossa_character) ({})",
            size_of::<ossa_character>()
        )));
    }
    // SAFETY: the caller's initialised struct, of this layout's size.
    let c = unsafe { character.read_unaligned() };
    let suit = match c_str(c.suit) {
        Some(s) => Some(
            s.to_str()
                .map_err(|_| Error::invalid_argument("character->suit is not UTF-8"))?
                .to_owned(),
        ),
        None => None,
    };
    Ok(CharacterCheck {
        skeleton: c_str(c.skeleton).map(os_path),
        suit,
        skills: paths(c.skills, c.skill_count, "character->skills")?,
        search: paths(c.search, c.search_count, "character->search")?,
    })
}

/// Every problem of the Sims character whose file is `path` (a skeleton, a suit file, or both),
/// with what `character` names (NULL: the file alone), as `ossa validate FILE --skeleton --suit
/// --skills --search` lists them, file by file in the order they are checked (the file, the
/// skeleton, the suit's file, each skin's mesh, the skill files, their numbers): each file's own
/// problems, a suit or a skin's mesh found nowhere (naming the names and the directories looked
/// in), a suit for the adult skeleton on the child's or the other way round, a mesh bound (or
/// blending vertices) to bones the skeleton lacks, a texture not found, not read by the game, of
/// sides that are not powers of two or (BMP) not 8 bits a pixel, a skill moving bones the
/// skeleton lacks or whose numbers are missing or fewer than its motions read, and a CMX whose
/// BCF beside it holds something else (docs/sidecars.md). The first `capacity` problems are
/// written to `problems` (NULL when capacity is 0), `*count` is the number of all of them (call
/// with capacity 0 to size the buffer), and `*more` (when not NULL) the problems of files' own
/// formats found beyond those recorded. OSSA_OK whatever the problems: the character is clean
/// when `*count` and `*more` are 0. Files are read from the OS filesystem, each inside its own
/// directory; `options` (NULL = defaults): `flags` (OSSA_LOAD_STRICT), `format` and
/// `max_bytes` for the file (the others are read with its strictness and limit, their formats
/// detected); `options->io` is OSSA_ERR_INVALID_ARGUMENT.
///
/// # Safety
/// `path` is a NUL-terminated string; `character` is NULL or initialised, its strings
/// NUL-terminated and its arrays of the counts given; `options` is NULL or initialised;
/// `problems` points to `capacity` writable problems or is NULL with capacity 0; `count` is
/// writable; `more` and `error` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ossa_check_character(
    path: *const c_char,
    character: *const ossa_character,
    options: *const ossa_load_options,
    problems: *mut ossa_problem,
    capacity: usize,
    count: *mut usize,
    more: *mut usize,
    error: *mut ossa_error,
) -> u32 {
    guard(error, || {
        let path = c_str(path).ok_or_else(|| null("path"))?;
        if count.is_null() {
            return Err(null("count"));
        }
        if problems.is_null() && capacity > 0 {
            return Err(null("problems"));
        }
        let check = read_character(character)?;
        let options = read_options(options)?;
        let report = check_character(&os_path(path), &check, &options.rust())?;
        let mut total = 0usize;
        let mut beyond = 0usize;
        for f in &report.files {
            beyond = beyond.saturating_add(f.more_problems);
            let file = f.file.to_string_lossy();
            for p in &f.problems {
                if total < capacity {
                    let d = p.detail();
                    let problem = ossa_problem {
                        code: p.code() as u32,
                        line: d.line.unwrap_or(0),
                        offset: d.offset.unwrap_or(u64::MAX),
                        file: fill(&file),
                        message: fill(&p.to_string()),
                    };
                    // SAFETY: the caller's buffer holds `capacity` problems (checked non-null
                    // above when capacity > 0), and total < capacity.
                    unsafe { problems.add(total).write_unaligned(problem) };
                }
                total = total.saturating_add(1);
            }
        }
        // SAFETY: checked non-null; the caller's size_t.
        unsafe { count.write_unaligned(total) };
        if !more.is_null() {
            // SAFETY: non-null; the caller's size_t.
            unsafe { more.write_unaligned(beyond) };
        }
        Ok(())
    })
}
