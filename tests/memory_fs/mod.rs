//! Files served from memory, as an engine serves its pak files through `options.io`, recording
//! every path ossa asks for. Each test binary that needs it declares `mod memory_fs;`.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashMap;

use ossa::Error;
use ossa::io::{FileData, FileSystem};

#[derive(Default)]
pub struct MemoryFs {
    pub files: HashMap<String, Vec<u8>>,
    /// Every path asked for, in order.
    pub asked: RefCell<Vec<String>>,
}

impl MemoryFs {
    pub fn from_files<P: Into<String>>(files: impl IntoIterator<Item = (P, Vec<u8>)>) -> MemoryFs {
        MemoryFs {
            files: files.into_iter().map(|(p, b)| (p.into(), b)).collect(),
            asked: RefCell::default(),
        }
    }

    pub fn add(&mut self, path: &str, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.to_owned(), bytes.into());
    }

    pub fn asked(&self) -> Vec<String> {
        self.asked.borrow().clone()
    }

    pub fn forget(&self) {
        self.asked.borrow_mut().clear();
    }
}

impl FileSystem for MemoryFs {
    fn read(&self, path: &str) -> ossa::Result<FileData<'_>> {
        self.asked.borrow_mut().push(path.to_owned());
        match self.files.get(path) {
            Some(bytes) => Ok(Box::new(bytes.as_slice())),
            None => Err(Error::not_found(format!("{path}: not in the pak"))),
        }
    }
}
