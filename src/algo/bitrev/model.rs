//! CPU model of the bit-reversal permutation (seed 000), stage by stage.

/// The seed's Demo B table for 16 elements: the indices after stages 1, 2 and 3 (stage 4 leaves
/// them where stage 3 put them).
pub const DEMO_B_16: [[u32; 16]; 3] = [
    [0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15],
    [0, 4, 8, 12, 2, 6, 10, 14, 1, 5, 9, 13, 3, 7, 11, 15],
    [0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15],
];

/// Demo A: the reversed index of `i` among `log_n` bits, by the seed's loop (the last of
/// [`demo_a_steps`], without keeping the steps: the model runs it for every index).
pub fn demo_a(i: u32, log_n: u32) -> u32 {
    let (mut x, mut irev) = (i, i);
    for _ in 1..log_n {
        x >>= 1;
        irev = (irev << 1) | (x & 1);
    }
    irev & mask(log_n)
}

fn mask(log_n: u32) -> u32 {
    ((1u64 << log_n) - 1) as u32
}

/// One step of Demo A's loop (k = 0 is the initialisation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DemoAStep {
    pub k: u32,
    pub i: u32,
    pub irev: u32,
}

/// Every step of Demo A for index `i`: init, then k = 1 … log_n − 1. The final `irev & (N − 1)`
/// is [`demo_a`].
pub fn demo_a_steps(i: u32, log_n: u32) -> Vec<DemoAStep> {
    let (mut x, mut irev) = (i, i);
    let mut steps = vec![DemoAStep { k: 0, i: x, irev }];
    for k in 1..log_n {
        x >>= 1;
        irev = (irev << 1) | (x & 1);
        steps.push(DemoAStep { k, i: x, irev });
    }
    steps
}

/// The naive variant: `out[rev(i)] = in[i]`.
pub fn naive<T: Copy>(input: &[T]) -> Vec<T> {
    let log_n = input.len().trailing_zeros();
    let mut out = input.to_vec();
    for (i, &x) in input.iter().enumerate() {
        out[demo_a(i as u32, log_n) as usize] = x;
    }
    out
}

/// Where Demo B's kernel1 sends position `i` at the stage whose blocks end up `k` long.
pub fn stage_target(i: usize, k: usize) -> usize {
    let block = i / (2 * k);
    block * 2 * k + (i & 1) * k + (i % (2 * k)) / 2
}

/// Demo B: the array after every stage s = 1 … log2(N) (stage s leaves blocks of N / 2^s).
pub fn staged<T: Copy>(input: &[T]) -> Vec<Vec<T>> {
    let n = input.len();
    let mut cur = input.to_vec();
    let mut stages = Vec::new();
    for s in 1..=n.trailing_zeros() {
        cur = stage(&cur, n >> s);
        stages.push(cur.clone());
    }
    stages
}

/// One stage of Demo B: every block of 2k split into its evens (left half) and odds (right half).
pub fn stage<T: Copy>(cur: &[T], k: usize) -> Vec<T> {
    let mut next = cur.to_vec();
    for (i, &x) in cur.iter().enumerate() {
        next[stage_target(i, k)] = x;
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_a_matches_the_seed() {
        assert_eq!(demo_a(1, 3), 4);
        let steps = demo_a_steps(1, 3);
        assert_eq!(
            steps.iter().map(|s| (s.i, s.irev)).collect::<Vec<_>>(),
            [(1, 1), (0, 2), (0, 4)]
        );
        for log_n in 0..12 {
            for i in 0..(1u32 << log_n) {
                let want = if log_n == 0 {
                    0
                } else {
                    i.reverse_bits() >> (32 - log_n)
                };
                assert_eq!(demo_a(i, log_n), want);
            }
        }
    }

    #[test]
    fn demo_b_stages() {
        let idx: Vec<u32> = (0..16).collect();
        let st = staged(&idx);
        assert_eq!(st[..3], DEMO_B_16);
        assert_eq!(st[3], st[2], "placed one stage before the end");
        assert_eq!(st[3], naive(&idx));
    }
}
