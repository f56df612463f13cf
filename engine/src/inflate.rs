//! Raw DEFLATE decoding (RFC 1951) for share links, in place of `miniz_oxide`'s inflater.
//!
//! miniz_oxide's `decompress` is a state machine built for streaming and speed: about
//! 11 kB of the shipped wasm, for links of a few kilobytes. This decoder reads a whole
//! buffer bit by bit and decodes Huffman codes canonically (as zlib's `puff` does), in a
//! tenth of the code. It accepts what miniz_oxide's `decompress_to_vec_with_limit` accepts
//! and refuses what it refuses, with the same two outcomes on failure: the output limit
//! reached, or damaged data (`tests/share_fuzz.rs` compares the two on mutated links).
//! The one difference is a stream no encoder writes: a Huffman code of a single symbol
//! longer than 10 bits, whose unused codes miniz_oxide reads as symbol 0 and this decoder
//! refuses.

/// Why a stream did not inflate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InflateError {
    /// The data would inflate to more than the limit.
    TooLarge,
    /// Not a valid raw DEFLATE stream, or cut short.
    Damaged,
}

use InflateError::{Damaged, TooLarge};

type R<T> = Result<T, InflateError>;

struct Bits<'a> {
    s: &'a [u8],
    /// Position in bits.
    at: usize,
}

impl Bits<'_> {
    /// `n` bits (at most 16), least significant first.
    fn get(&mut self, n: u32) -> R<u32> {
        let mut v = 0;
        for i in 0..n {
            let byte = *self.s.get(self.at >> 3).ok_or(Damaged)?;
            v |= u32::from((byte >> (self.at & 7)) & 1) << i;
            self.at += 1;
        }
        Ok(v)
    }
}

/// A canonical Huffman code: how many codes of each length, and the symbols in code order.
struct Code {
    count: [u16; 16],
    symbol: Vec<u16>,
}

impl Code {
    /// From each symbol's code length (0: unused). `strict`: refuse an incomplete code even
    /// of one symbol (miniz_oxide allows a lone code, or none, in the literal and distance
    /// codes, not in the code-length code).
    fn new(lengths: &[u8], strict: bool) -> R<Code> {
        let mut count = [0u16; 16];
        for &l in lengths {
            count[usize::from(l)] += 1;
        }
        let used: u16 = count[1..].iter().sum();
        let mut room = 0u32;
        for (len, &c) in count.iter().enumerate().skip(1) {
            room += u32::from(c) << (15 - len);
        }
        if room != 1 << 15 && (used > 1 || strict) {
            return Err(Damaged);
        }
        let mut symbol = Vec::with_capacity(lengths.len());
        for len in 1..16 {
            for (s, &l) in lengths.iter().enumerate() {
                if usize::from(l) == len {
                    symbol.push(s as u16);
                }
            }
        }
        Ok(Code { count, symbol })
    }

    fn decode(&self, bits: &mut Bits) -> R<usize> {
        // The first code of each length, and the index of its symbol.
        let (mut code, mut first, mut index) = (0u32, 0u32, 0usize);
        for &count in &self.count[1..] {
            code |= bits.get(1)?;
            let count = u32::from(count);
            if code < first + count {
                return Ok(usize::from(self.symbol[index + (code - first) as usize]));
            }
            index += count as usize;
            first = (first + count) << 1;
            code <<= 1;
        }
        Err(Damaged)
    }
}

const LENGTH_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LENGTH_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
/// The order in which a dynamic block gives the code-length code's lengths.
const LENGTH_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// Inflates raw DEFLATE data to at most `limit` bytes; bytes after the final block are
/// ignored.
pub fn inflate(data: &[u8], limit: usize) -> R<Vec<u8>> {
    let mut out = Vec::new();
    let mut bits = Bits { s: data, at: 0 };
    loop {
        let last = bits.get(1)?;
        match bits.get(2)? {
            0 => {
                bits.at = bits.at.div_ceil(8) * 8;
                let len = bits.get(16)?;
                if len != !bits.get(16)? & 0xffff {
                    return Err(Damaged);
                }
                for _ in 0..len {
                    if out.len() == limit {
                        return Err(TooLarge);
                    }
                    out.push(bits.get(8)? as u8);
                }
            }
            kind @ (1 | 2) => {
                let (lit, dist) = if kind == 1 {
                    let mut l = [8u8; 288];
                    l[144..256].fill(9);
                    l[256..280].fill(7);
                    (Code::new(&l, false)?, Code::new(&[5; 32], false)?)
                } else {
                    dynamic_codes(&mut bits)?
                };
                loop {
                    let sym = lit.decode(&mut bits)?;
                    if sym < 256 {
                        if out.len() == limit {
                            return Err(TooLarge);
                        }
                        out.push(sym as u8);
                        continue;
                    }
                    if sym == 256 {
                        break;
                    }
                    let i = sym - 257;
                    if i >= LENGTH_BASE.len() {
                        return Err(Damaged);
                    }
                    let len =
                        usize::from(LENGTH_BASE[i]) + bits.get(LENGTH_EXTRA[i].into())? as usize;
                    let d = dist.decode(&mut bits)?;
                    if d >= DIST_BASE.len() {
                        return Err(Damaged);
                    }
                    // Distance codes 4.. carry (code - 2) / 2 extra bits.
                    let extra = (d.max(2) as u32 - 2) / 2;
                    let back = usize::from(DIST_BASE[d]) + bits.get(extra)? as usize;
                    if back > out.len() {
                        return Err(Damaged);
                    }
                    if out.len() + len > limit {
                        return Err(TooLarge);
                    }
                    for _ in 0..len {
                        out.push(out[out.len() - back]);
                    }
                }
            }
            _ => return Err(Damaged),
        }
        if last == 1 {
            return Ok(out);
        }
    }
}

/// A dynamic block's header: the literal/length and distance codes.
fn dynamic_codes(bits: &mut Bits) -> R<(Code, Code)> {
    let nlit = bits.get(5)? as usize + 257;
    let ndist = bits.get(5)? as usize + 1;
    let nlen = bits.get(4)? as usize + 4;
    // RFC 1951 allows 286 and 30 codes; zlib and miniz_oxide refuse more.
    if nlit > 286 || ndist > 30 {
        return Err(Damaged);
    }
    let mut l = [0u8; 19];
    for &i in &LENGTH_ORDER[..nlen] {
        l[i] = bits.get(3)? as u8;
    }
    let lengths_code = Code::new(&l, true)?;
    let n = nlit + ndist;
    let mut lengths: Vec<u8> = Vec::with_capacity(n + 138);
    while lengths.len() < n {
        let sym = lengths_code.decode(bits)?;
        let (value, times) = match sym {
            0..=15 => (sym as u8, 1),
            16 => (*lengths.last().ok_or(Damaged)?, 3 + bits.get(2)?),
            17 => (0, 3 + bits.get(3)?),
            _ => (0, 11 + bits.get(7)?),
        };
        for _ in 0..times {
            lengths.push(value);
        }
    }
    if lengths.len() != n {
        return Err(Damaged);
    }
    Ok((
        Code::new(&lengths[..nlit], false)?,
        Code::new(&lengths[nlit..], false)?,
    ))
}
