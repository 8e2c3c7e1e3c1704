//! Bit-reversal's stage annotations: Demo B's blocks after each stage.

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct Notes {
    /// 0 = the input.
    pub stage: usize,
    /// Elements per block after this stage (N at the input, 1 at the end).
    pub block_size: usize,
    pub blocks: usize,
}

impl Notes {
    pub fn room(stage: usize, block_size: usize, blocks: usize) -> super::super::RoomNotes {
        super::super::RoomNotes::Bitrev(Notes {
            stage,
            block_size,
            blocks,
        })
    }
}
