//! BMMC's stage annotations: the factor matrix of each pass and the kernel that ran it.

use super::plan::Kernel;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Notes {
    /// 0 = the input (whose matrix is the whole A).
    pub pass: usize,
    /// The pass's matrix, row i = output bit i (`BitMatrix::row_strings`).
    pub matrix: Vec<String>,
    pub complement: u32,
    pub log_n: usize,
    /// The kernel: "naive", "tiled", "block", "blockmove" (absent at the input).
    pub kind: Option<&'static str>,
    /// Tiled kernel: the input bits of a tile.
    pub tile_bits: Option<Vec<usize>>,
    /// Block kernels: the block's bits.
    pub k: Option<usize>,
}

impl Notes {
    pub fn new(pass: usize, matrix: Vec<String>, complement: u32, log_n: usize) -> Self {
        Notes {
            pass,
            matrix,
            complement,
            log_n,
            kind: None,
            tile_bits: None,
            k: None,
        }
    }

    /// The notes of a pass run by `kernel`.
    pub fn with_kernel(mut self, kernel: &Kernel) -> Self {
        self.kind = Some(kernel.kind());
        match kernel {
            Kernel::Tiled { tin } => self.tile_bits = Some(tin.clone()),
            Kernel::Block { k } | Kernel::BlockMove { k } => self.k = Some(*k),
            Kernel::Naive => {}
        }
        self
    }
}
