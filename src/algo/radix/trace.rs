//! The radix room's stage annotations, as one typed struct ([`RadixNote`]) stored under the stage's
//! `radix` note; the view reads it back with [`RadixNote::of`], never by string keys.

use super::model::{self, DigitStep, TileFlow};
use super::plan::PassKind;
use crate::algo::Stage;
use crate::algo::stage::RoomNotes;
use crate::data::{DType, Data};
use serde::{Deserialize, Serialize};

/// The note key every radix stage stores its [`RadixNote`] under.
pub const NOTE: &str = "radix";

/// The room's stage annotations: the whole note under one `"radix"` key of the stage's JSON.
#[derive(Clone, Debug, Serialize)]
pub struct Notes {
    pub radix: RadixNote,
}
/// Per-key and per-tile arrays are kept in a stage up to this many keys (and tiles × buckets).
pub const MAX_DETAIL: usize = 1 << 14;

/// What a stage shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepKind {
    #[default]
    Input,
    /// onesweep: every digit's bucket counts over the whole input (data: D × R counts).
    Histogram,
    /// onesweep: those counts scanned: where each bucket of each digit starts (data: D × R).
    DigitOffsets,
    /// classic: the tile histograms of one digit, bucket-major (data: R × tiles counts).
    TileHistogram,
    /// classic: the tile counts scanned: every (tile, bucket)'s global offset, bucket-major.
    TileScan,
    /// The scatter of one digit (data: the keys after it).
    Scatter,
}

/// Everything a view needs to draw one radix stage.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RadixNote {
    pub kind: StepKind,
    /// The digit (0 = least significant) this stage works on; none for whole-sort stages.
    pub digit: Option<u32>,
    pub shift: u32,
    pub bits: u32,
    pub radix: u32,
    pub digits: u32,
    pub tile: usize,
    pub tiles: usize,
    pub n: usize,
    /// The keys' digits, the tiles' counts and offsets, the keys' destinations.
    #[serde(flatten)]
    pub flow: TileFlow,
    /// The array before the pass.
    pub before: Vec<u32>,
    /// The payload after the pass (key-value sorts).
    pub values: Vec<u32>,
    /// onesweep: every tile's (predecessor counts bucket 0 took, fallbacks).
    pub lookback: Vec<[u32; 2]>,
    /// onesweep: fallbacks of the pass, summed over its tiles (kept at any N).
    pub fallbacks: u64,
}

impl RadixNote {
    /// The note of a stage, if it has one.
    pub fn of(stage: &Stage) -> Option<RadixNote> {
        stage.radix().map(|n| n.radix.clone())
    }

    /// Whether per-key and per-tile detail was kept.
    pub fn detailed(&self) -> bool {
        !self.flow.key_digits.is_empty()
    }

    pub fn attach(&self, stage: Stage) -> Stage {
        Stage::with(
            stage.label,
            stage.data,
            RoomNotes::Radix(Notes {
                radix: self.clone(),
            }),
        )
    }
}

/// The shape common to every note of one run.
#[derive(Clone, Copy)]
pub struct Frame {
    pub bits: u32,
    pub tile: usize,
    pub tiles: usize,
    pub n: usize,
}

impl Frame {
    pub fn note(&self, kind: StepKind, digit: Option<u32>) -> RadixNote {
        RadixNote {
            kind,
            digit,
            shift: digit.unwrap_or(0) * self.bits,
            bits: self.bits,
            radix: 1 << self.bits,
            digits: model::digits(self.bits),
            tile: self.tile,
            tiles: self.tiles,
            n: self.n,
            ..Default::default()
        }
    }

    fn small(&self) -> bool {
        self.n <= MAX_DETAIL && self.tiles << self.bits <= MAX_DETAIL
    }
}

/// Compare one traced array with the model; the first difference becomes the run's mismatch.
pub fn check(what: &str, gpu: &[u32], cpu: &[u32], mismatch: &mut Option<String>) {
    if mismatch.is_none()
        && let Some(m) = crate::algo::first_mismatch(DType::U32, gpu, cpu)
    {
        *mismatch = Some(format!("{what}: {m}"));
    }
}

/// Builds a traced run's stages pass by pass from the captures, each checked against the model.
pub struct Tracer<'a> {
    pub frame: Frame,
    pub dtype: DType,
    pub input: &'a [u32],
    /// The model's digit passes (model::steps).
    pub steps: &'a [DigitStep],
    /// The model's counts of every digit (model::digit_counts).
    pub counts: Vec<u32>,
    pub with_values: bool,
}

impl Tracer<'_> {
    /// The first stage: the input.
    pub fn input(&self) -> Stage {
        self.frame.note(StepKind::Input, None).attach(Stage::new(
            "input",
            Data::new(self.dtype, self.input.to_vec()),
        ))
    }

    /// How many stages pass `kind` makes (the onesweep histogram two: its counts, its offsets).
    pub fn stage_count(kind: PassKind) -> usize {
        if kind == PassKind::Histogram { 2 } else { 1 }
    }

    /// The stages of pass `i` (of `kind`, with captured regions `c`); the first difference from
    /// the model goes to `mismatch`.
    pub fn stages(
        &self,
        i: usize,
        kind: PassKind,
        c: &[Vec<u32>],
        mismatch: &mut Option<String>,
    ) -> Vec<Stage> {
        let frame = self.frame;
        let (n, r, tiles) = (frame.n, 1usize << frame.bits, frame.tiles);
        let first = c.first().cloned().unwrap_or_default();
        let st = match kind {
            PassKind::Histogram => {
                check("digit counts", &first, &self.counts, mismatch);
                let offsets = c.get(1).cloned().unwrap_or_default();
                let want = model::digit_offsets(&self.counts, frame.bits);
                check("digit offsets", &offsets, &want, mismatch);
                return vec![
                    frame.note(StepKind::Histogram, None).attach(Stage::new(
                        "histogram: every digit's bucket counts",
                        Data::new(DType::U32, first),
                    )),
                    frame.note(StepKind::DigitOffsets, None).attach(Stage::new(
                        "scan: where every digit's buckets start (the histogram's last workgroup)",
                        Data::new(DType::U32, offsets),
                    )),
                ]
                .into_iter()
                .map(|s| s.passes(vec![i]))
                .collect();
            }
            PassKind::TileHistogram(d) | PassKind::TileScan(d) => {
                let m = &self.steps[d as usize];
                let hist = matches!(kind, PassKind::TileHistogram(_));
                let want = DigitStep::bucket_major(
                    if hist {
                        &m.flow.tile_hist
                    } else {
                        &m.flow.tile_offsets
                    },
                    r,
                );
                let what = if hist {
                    "tile histograms"
                } else {
                    "scanned counts"
                };
                check(&format!("digit {d}: {what}"), &first, &want, mismatch);
                let mut note = frame.note(
                    if hist {
                        StepKind::TileHistogram
                    } else {
                        StepKind::TileScan
                    },
                    Some(d),
                );
                if frame.small() {
                    note.flow.tile_hist = m.flow.tile_hist.clone();
                    note.flow.tile_offsets = m.flow.tile_offsets.clone();
                }
                let label = if hist {
                    format!("digit {d}: tile histograms")
                } else {
                    format!("digit {d}: scanned counts = global offsets")
                };
                note.attach(Stage::new(label, Data::new(DType::U32, first)))
            }
            PassKind::Scatter(d) => {
                let m = &self.steps[d as usize];
                let tr = c.get(1).cloned().unwrap_or_default();
                let part = |a: usize, len: usize| tr.get(a..a + len).unwrap_or(&[]).to_vec();
                let flow = TileFlow {
                    key_digits: part(0, n),
                    dest: part(n, n),
                    tile_hist: part(2 * n, tiles * r),
                    tile_offsets: part(2 * n + tiles * r, tiles * r),
                };
                let lb = part(2 * n + 2 * tiles * r, 2 * tiles);
                for (what, gpu, cpu) in [
                    ("key digits", &flow.key_digits, &m.flow.key_digits),
                    ("tile histograms", &flow.tile_hist, &m.flow.tile_hist),
                    ("tile offsets", &flow.tile_offsets, &m.flow.tile_offsets),
                    ("destinations", &flow.dest, &m.flow.dest),
                    ("keys after", &first, &m.keys),
                ] {
                    check(&format!("digit {d}: {what}"), gpu, cpu, mismatch);
                }
                let values = if self.with_values {
                    let v = c.get(2).cloned().unwrap_or_default();
                    check(&format!("digit {d}: values after"), &v, &m.values, mismatch);
                    v
                } else {
                    Vec::new()
                };
                let mut note = frame.note(StepKind::Scatter, Some(d));
                note.fallbacks = lb.iter().skip(1).step_by(2).map(|&f| f as u64).sum();
                if frame.small() {
                    note.flow = flow;
                    note.before = if d == 0 {
                        self.input.to_vec()
                    } else {
                        self.steps[d as usize - 1].keys.clone()
                    };
                    note.values = values;
                    note.lookback = lb.chunks(2).map(|p| [p[0], p[1]]).collect();
                }
                note.attach(Stage::new(
                    format!(
                        "digit {d} (bits {}..{}): scatter",
                        d * frame.bits,
                        ((d + 1) * frame.bits).min(32) - 1
                    ),
                    Data::new(self.dtype, first),
                ))
            }
        };
        vec![st.passes(vec![i])]
    }
}
