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
    /// The kernel (absent at the input); its JSON is the plan's name for it.
    pub kind: Option<KernelKind>,
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
        self.kind = Some(KernelKind::of(kernel));
        match kernel {
            Kernel::Tiled { tin, .. } => self.tile_bits = Some(tin.clone()),
            Kernel::Block { k } | Kernel::BlockMove { k } => self.k = Some(*k),
            Kernel::Naive => {}
        }
        self
    }
}

/// Which kernel ran a pass, written as its name (`Kernel::kind`: "naive", "tiled", "block",
/// "blockmove").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    Naive,
    Tiled,
    Block,
    BlockMove,
}

impl KernelKind {
    pub fn of(kernel: &Kernel) -> KernelKind {
        match kernel {
            Kernel::Naive => KernelKind::Naive,
            Kernel::Tiled { .. } => KernelKind::Tiled,
            Kernel::Block { .. } => KernelKind::Block,
            Kernel::BlockMove { .. } => KernelKind::BlockMove,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Naive => "naive",
            KernelKind::Tiled => "tiled",
            KernelKind::Block => "block",
            KernelKind::BlockMove => "blockmove",
        }
    }
}

impl Serialize for KernelKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
