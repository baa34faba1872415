//! DashGL's Dash Model Format 1.5, binary and JSON.

use super::Checker;
use crate::error::{Error, Result};
use crate::model::ModelParts;

pub const MAGIC: &[u8; 4] = b"DASH";

pub fn looks_like_json(data: &[u8]) -> bool {
    data.trim_ascii_start().starts_with(b"{") && data.windows(6).any(|w| w == b"\"DASH\"")
}

pub(crate) fn read_binary(_data: &[u8], _checker: &mut Checker) -> Result<ModelParts> {
    Err(Error::unsupported("DMF files are not supported yet"))
}

pub(crate) fn read_json(_data: &[u8], _checker: &mut Checker) -> Result<ModelParts> {
    Err(Error::unsupported("DMF JSON files are not supported yet"))
}
