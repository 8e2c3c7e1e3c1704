// The permutation's buffers, four consecutive words at a time (16-byte loads and stores).
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
