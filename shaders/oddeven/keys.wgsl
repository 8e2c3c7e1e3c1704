// Order-preserving keys (prepended to every odd-even kernel). Every element is a 32-bit pattern; the
// kernels sort u32 *keys* ascending and turn them back into the same bits on the way out:
//   u32: the bits themselves          i32: flip the sign bit
//   f32: sign set -> flip all bits, else flip the sign bit; this is the total order
//        -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN (NaNs ordered by payload)
//   descending: the complement of the ascending key.
// Key 0xFFFFFFFF is the "+inf-like" sentinel: positions past the end of the array behave as if they
// held it, so the networks never touch them (a comparator whose upper index is missing is a no-op).

const DTYPE: u32 = {{DTYPE}}u;   // 0 = u32, 1 = i32, 2 = f32
const DESC: bool = {{DESC}};

fn to_key(x: u32) -> u32 {
    var k = x;
    if (DTYPE == 1u) {
        k = x ^ 0x80000000u;
    } else if (DTYPE == 2u) {
        // The sign spread over the word (arithmetic shift): ~x for negatives, else the sign
        // flipped — a shift and a XOR where a select cost the radix sort's first pass 1 %.
        k = x ^ (bitcast<u32>(bitcast<i32>(x) >> 31u) | 0x80000000u);
    }
    if (DESC) {
        k = ~k;
    }
    return k;
}

fn from_key(key: u32) -> u32 {
    var k = key;
    if (DESC) {
        k = ~k;
    }
    if (DTYPE == 1u) {
        return k ^ 0x80000000u;
    } else if (DTYPE == 2u) {
        return k ^ (bitcast<u32>(bitcast<i32>(~k) >> 31u) | 0x80000000u);
    }
    return k;
}
