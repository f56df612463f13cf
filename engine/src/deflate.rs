//! Raw DEFLATE encoding (RFC 1951) for share links, in place of `miniz_oxide`'s compressor.
//!
//! miniz_oxide's `compress_to_vec` is built for streaming and speed: about 23 kB of the
//! shipped wasm (5 kB gzip), for links of a few kilobytes of JSON. This encoder holds the
//! whole input, finds matches on hash chains with lazy matching (as zlib's `deflate_slow`
//! does), and writes each block three ways (stored, fixed and dynamic Huffman codes),
//! keeping the shortest: in about 6 kB, and links no longer than miniz_oxide's level 9
//! (`tests/share_deflate.rs` checks both, and that both inflaters open every stream).
//!
//! The output depends on the input only: positions are `u32`, ties are broken by position,
//! and nothing depends on the pointer width or on hashing order, so the wasm build and the
//! native one write the same links.

/// Longest distance back a match may reach.
const WINDOW: usize = 32_768;
/// Longest match.
const MAX_MATCH: usize = 258;
/// Candidates tried per position: every preset's link is as short with 128 as with zlib's
/// 4096; 1024 bounds the time on inputs of few distinct bytes, whose chains are long.
const MAX_CHAIN: u32 = 1024;
/// A match this long is taken without looking at the next position.
const NICE: usize = 258;
/// Literals and matches per block: each block has codes fitted to its own part of the input.
const BLOCK_SYMBOLS: usize = 16_384;
const HASH_BITS: u32 = 15;
const NONE: u32 = u32::MAX;

/// The order in which a dynamic block gives the code-length code's lengths.
const LENGTH_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

/// A literal (`dist == 0`, `len` the byte) or a match of `len` bytes `dist` back.
#[derive(Clone, Copy)]
struct Symbol {
    len: u16,
    dist: u16,
}

impl Symbol {
    fn literal(byte: u8) -> Symbol {
        Symbol {
            len: u16::from(byte),
            dist: 0,
        }
    }

    fn copy(len: usize, dist: usize) -> Symbol {
        Symbol {
            len: len as u16,
            dist: dist as u16,
        }
    }

    /// Input bytes covered.
    fn bytes(self) -> usize {
        if self.dist == 0 {
            1
        } else {
            usize::from(self.len)
        }
    }

    /// The literal/length symbol (0..=285); for a match, its length's extra bits, its
    /// distance code and the distance's extra bits, each extra as (value, bit count).
    fn codes(self) -> (usize, (u32, u32), usize, (u32, u32)) {
        if self.dist == 0 {
            return (usize::from(self.len), (0, 0), 0, (0, 0));
        }
        // Length 258 has a code of its own; 227..=257 share the one before it.
        let (code, len_extra) = if usize::from(self.len) == MAX_MATCH {
            (28, (0, 0))
        } else {
            code_of(u32::from(self.len) - 3, 2)
        };
        let (dist, dist_extra) = code_of(u32::from(self.dist) - 1, 1);
        (257 + code as usize, len_extra, dist as usize, dist_extra)
    }
}

/// The code of a length (less 3, `group` 2) or distance (less 1, `group` 1), and its extra
/// bits: past the first `2 << group` values, which have a code each, every bit of the value's
/// length starts `1 << group` codes, each covering an equal range (RFC 1951 §3.2.5).
fn code_of(v: u32, group: u32) -> (u32, (u32, u32)) {
    if v < 2 << group {
        return (v, (0, 0));
    }
    let extra = 31 - v.leading_zeros() - group;
    (
        ((extra + 1) << group) + ((v >> extra) & ((1 << group) - 1)),
        (v & ((1 << extra) - 1), extra),
    )
}

/// Compresses `data` into one raw DEFLATE stream.
pub fn deflate(data: &[u8]) -> Vec<u8> {
    let symbols = lz77(data);
    let mut out = Bits::default();
    let (mut at, mut start) = (0, 0);
    // At least one block, even for no input.
    loop {
        let end = (start + BLOCK_SYMBOLS).min(symbols.len());
        let block = &symbols[start..end];
        let raw: usize = block.iter().map(|s| s.bytes()).sum();
        let last = end == symbols.len();
        let candidates = [
            stored(&out, &data[at..at + raw], last),
            huffman(&out, block, last, false),
            huffman(&out, block, last, true),
        ];
        // The first of the shortest: ties go to stored, then fixed, so the choice is fixed too.
        let mut best = &candidates[0];
        for c in &candidates[1..] {
            if c.len() < best.len() {
                best = c;
            }
        }
        out.append(best);
        at += raw;
        start = end;
        if last {
            return out.finish();
        }
    }
}

/// Hash of the three bytes at `i`.
fn hash(data: &[u8], i: usize) -> usize {
    let v = (u32::from(data[i]) << 16) | (u32::from(data[i + 1]) << 8) | u32::from(data[i + 2]);
    (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
}

/// The input as literals and matches: hash chains of three-byte prefixes, each position
/// taking the longest match (the nearest of equal ones) unless the next position starts a
/// longer one.
fn lz77(data: &[u8]) -> Vec<Symbol> {
    let n = data.len();
    let mut head = vec![NONE; 1 << HASH_BITS];
    let mut prev = vec![NONE; n];
    let mut inserted = 0;
    // Adds every position before `to` that has three bytes to hash to its chain.
    let mut insert = |to: usize, head: &mut Vec<u32>, prev: &mut Vec<u32>| {
        while inserted < to.min(n.saturating_sub(2)) {
            let h = hash(data, inserted);
            prev[inserted] = head[h];
            head[h] = inserted as u32;
            inserted += 1;
        }
    };
    let longest = |i: usize, head: &[u32], prev: &[u32]| -> (usize, usize) {
        let (mut best, mut dist) = (0, 0);
        if i + 3 > n {
            return (0, 0);
        }
        let max = (n - i).min(MAX_MATCH);
        let mut c = head[hash(data, i)];
        let mut tries = MAX_CHAIN;
        while c != NONE && tries > 0 && i - c as usize <= WINDOW {
            let j = c as usize;
            if data[j + best.min(max - 1)] == data[i + best.min(max - 1)] {
                let len = data[j..j + max]
                    .iter()
                    .zip(&data[i..i + max])
                    .take_while(|(a, b)| a == b)
                    .count();
                if len > best {
                    (best, dist) = (len, i - j);
                    if len >= NICE.min(max) {
                        break;
                    }
                }
            }
            c = prev[j];
            tries -= 1;
        }
        // A three-byte match far back costs more than its three literals.
        if best < 3 || (best == 3 && dist > 4096) {
            return (0, 0);
        }
        (best, dist)
    };
    let mut out = Vec::with_capacity(n / 2);
    let mut i = 0;
    // The match found at the previous position, not yet written.
    let mut pending: Option<(usize, usize)> = None;
    while i < n {
        insert(i, &mut head, &mut prev);
        let here = longest(i, &head, &prev);
        match pending {
            Some((len, dist)) if len >= here.0 => {
                out.push(Symbol::copy(len, dist));
                i += len - 1;
                pending = None;
                continue;
            }
            // The longer match here wins: the previous position is a literal, and the
            // match found there is dropped (left pending, it was written again later).
            Some(_) => {
                out.push(Symbol::literal(data[i - 1]));
                pending = None;
            }
            None => {}
        }
        if here.0 >= NICE.min(n - i) && here.0 > 0 {
            out.push(Symbol::copy(here.0, here.1));
            i += here.0;
        } else if here.0 > 0 {
            pending = Some(here);
            i += 1;
        } else {
            out.push(Symbol::literal(data[i]));
            i += 1;
        }
    }
    out
}

/// Bits written least significant first, as DEFLATE packs them.
#[derive(Default, Clone)]
struct Bits {
    out: Vec<u8>,
    acc: u32,
    n: u32,
}

impl Bits {
    /// A writer that continues where `other` stands, holding only its unfinished byte.
    fn after(other: &Bits) -> Bits {
        Bits {
            out: Vec::new(),
            acc: other.acc,
            n: other.n,
        }
    }

    /// Writes the low `n` bits of `v` (at most 16).
    fn put(&mut self, v: u32, n: u32) {
        self.acc |= v << self.n;
        self.n += n;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }

    /// Length in bits, counting the unfinished byte.
    fn len(&self) -> usize {
        self.out.len() * 8 + self.n as usize
    }

    /// Continues with what `next` wrote after this writer's state.
    fn append(&mut self, next: &Bits) {
        self.out.extend_from_slice(&next.out);
        self.acc = next.acc;
        self.n = next.n;
    }

    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// `bytes` as stored blocks (at most 65 535 bytes each).
fn stored(from: &Bits, bytes: &[u8], last: bool) -> Bits {
    let mut b = Bits::after(from);
    let mut rest = bytes;
    // At least one block, even for no bytes.
    loop {
        let (chunk, after) = rest.split_at(rest.len().min(65_535));
        rest = after;
        b.put(u32::from(last && rest.is_empty()), 3);
        b.put(0, (8 - b.n) % 8);
        let len = chunk.len() as u32;
        b.put(len, 16);
        b.put(!len & 0xffff, 16);
        b.out.extend_from_slice(chunk);
        if rest.is_empty() {
            return b;
        }
    }
}

/// A block of `symbols` with the fixed codes or with codes fitted to it (`dynamic`).
fn huffman(from: &Bits, symbols: &[Symbol], last: bool, dynamic: bool) -> Bits {
    let mut b = Bits::after(from);
    b.put(u32::from(last) | if dynamic { 4 } else { 2 }, 3);
    let (lit, dist) = if dynamic {
        let mut lit_freq = [0u32; 286];
        let mut dist_freq = [0u32; 30];
        lit_freq[256] = 1;
        for s in symbols {
            let (lit, _, dist, _) = s.codes();
            lit_freq[lit] += 1;
            if lit > 256 {
                dist_freq[dist] += 1;
            }
        }
        let lit = lengths(&lit_freq, 15);
        let dist = lengths(&dist_freq, 15);
        write_header(&mut b, &lit, &dist);
        (lit, dist)
    } else {
        let mut lit = vec![8u8; 288];
        lit[144..256].fill(9);
        lit[256..280].fill(7);
        (lit, vec![5u8; 30])
    };
    let lit_codes = codes(&lit);
    let dist_codes = codes(&dist);
    let sym = |b: &mut Bits, s: usize| b.put(lit_codes[s], u32::from(lit[s]));
    for s in symbols {
        let (l, len_extra, d, dist_extra) = s.codes();
        sym(&mut b, l);
        if l > 256 {
            b.put(len_extra.0, len_extra.1);
            b.put(dist_codes[d], u32::from(dist[d]));
            b.put(dist_extra.0, dist_extra.1);
        }
    }
    sym(&mut b, 256);
    b
}

/// A dynamic block's header: both codes' lengths, run-length coded with a code of their own.
fn write_header(b: &mut Bits, lit: &[u8], dist: &[u8]) {
    let nlit = lit
        .iter()
        .rposition(|&l| l > 0)
        .map_or(0, |i| i + 1)
        .max(257);
    let ndist = dist
        .iter()
        .rposition(|&l| l > 0)
        .map_or(0, |i| i + 1)
        .max(1);
    let mut all = lit[..nlit].to_vec();
    all.extend_from_slice(&dist[..ndist]);
    // (symbol, extra bits) of the code-length alphabet: 0..=15 a length, 16 repeats the last
    // 3..6 times, 17 writes 3..10 zeros, 18 writes 11..138.
    let mut runs: Vec<(u8, u8)> = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let v = all[i];
        let mut run = all[i..].iter().take_while(|&&l| l == v).count();
        i += run;
        if v == 0 {
            while run >= 11 {
                let k = run.min(138);
                runs.push((18, (k - 11) as u8));
                run -= k;
            }
            if run >= 3 {
                runs.push((17, (run - 3) as u8));
                run = 0;
            }
        } else {
            runs.push((v, 0));
            run -= 1;
            while run >= 3 {
                let k = run.min(6);
                runs.push((16, (k - 3) as u8));
                run -= k;
            }
        }
        for _ in 0..run {
            runs.push((v, 0));
        }
    }
    let mut freq = [0u32; 19];
    for &(s, _) in &runs {
        freq[usize::from(s)] += 1;
    }
    let len = lengths(&freq, 7);
    let code = codes(&len);
    let nlen = LENGTH_ORDER
        .iter()
        .rposition(|&s| len[s] > 0)
        .map_or(0, |i| i + 1)
        .max(4);
    b.put(nlit as u32 - 257, 5);
    b.put(ndist as u32 - 1, 5);
    b.put(nlen as u32 - 4, 4);
    for &s in &LENGTH_ORDER[..nlen] {
        b.put(u32::from(len[s]), 3);
    }
    for (s, extra) in runs {
        let s = usize::from(s);
        b.put(code[s], u32::from(len[s]));
        b.put(
            u32::from(extra),
            [2, 3, 7].get(s.wrapping_sub(16)).copied().unwrap_or(0),
        );
    }
}

/// Huffman code lengths for `freq`, none longer than `limit`. At least two symbols get a
/// code (a lone code is incomplete, which inflaters refuse in the code-length code). Past
/// the limit, the counts are halved until the tree fits, as few encoders need: a 15-bit
/// code takes thousands of symbols in a skewed spread.
fn lengths(freq: &[u32], limit: u32) -> Vec<u8> {
    let mut w: Vec<u32> = freq.to_vec();
    for i in 0..2 {
        if w.iter().filter(|&&f| f > 0).count() < 2 && w[i] == 0 {
            w[i] = 1;
        }
    }
    loop {
        let n = w.len();
        // Nodes 0..n are the symbols; each merge appends the parent of the two lightest and
        // retires them (weight MAX). The lightest is the first of equal ones.
        let mut weight: Vec<u32> = w
            .iter()
            .map(|&f| if f > 0 { f } else { u32::MAX })
            .collect();
        let mut parent = vec![0usize; n];
        let lightest = |weight: &mut Vec<u32>| {
            let k = (0..weight.len()).fold(0, |k, j| if weight[j] < weight[k] { j } else { k });
            (k, std::mem::replace(&mut weight[k], u32::MAX))
        };
        loop {
            let (a, wa) = lightest(&mut weight);
            let (b, wb) = lightest(&mut weight);
            // `a` was the root.
            if wb == u32::MAX {
                break;
            }
            parent[a] = weight.len();
            parent[b] = weight.len();
            weight.push(wa + wb);
            parent.push(0);
        }
        // Each used symbol's depth: the steps up to the root, the last node. Under 50 (a u8):
        // a tree n deep needs a total weight of Fibonacci(n), and weights are u32.
        let root = weight.len() - 1;
        let depth = |mut k: usize| {
            let mut d = 0;
            while k != root {
                k = parent[k];
                d += 1;
            }
            d
        };
        let lengths: Vec<u8> = (0..n)
            .map(|i| if w[i] > 0 { depth(i) } else { 0 })
            .collect();
        if lengths.iter().all(|&l| u32::from(l) <= limit) {
            return lengths;
        }
        for f in &mut w {
            *f = f.div_ceil(2);
        }
    }
}

/// The canonical code of each symbol (RFC 1951 §3.2.2), bit-reversed to be written least
/// significant bit first.
fn codes(lengths: &[u8]) -> Vec<u32> {
    let mut next = [0u32; 17];
    for &l in lengths {
        next[usize::from(l)] += 1;
    }
    next[0] = 0;
    let mut code = 0;
    for n in &mut next[1..] {
        let count = *n;
        *n = code;
        code = (code + count) << 1;
    }
    lengths
        .iter()
        .map(|&l| {
            let l = u32::from(l);
            let c = next[l as usize];
            next[l as usize] += 1;
            if l == 0 {
                0
            } else {
                c.reverse_bits() >> (32 - l)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_lengths_are_limited_and_complete() {
        // Fibonacci counts give the deepest tree: 24 levels for 25 symbols.
        let mut fib = vec![1u32, 1];
        while fib.len() < 25 {
            fib.push(fib[fib.len() - 1] + fib[fib.len() - 2]);
        }
        for (freq, limit) in [
            (fib.clone(), 15),
            (fib[..19].to_vec(), 7),
            (vec![0, 0, 9, 0], 15),
            (vec![0; 30], 15),
            (vec![5, 1, 1, 1], 2),
        ] {
            let lengths = lengths(&freq, limit);
            let used = lengths.iter().filter(|&&l| l > 0).count();
            assert!(used >= 2 && lengths.iter().all(|&l| u32::from(l) <= limit));
            let kraft: u32 = lengths
                .iter()
                .filter(|&&l| l > 0)
                .map(|&l| 1 << (15 - l))
                .sum();
            assert_eq!(kraft, 1 << 15, "{freq:?}: {lengths:?}");
            for (f, &l) in freq.iter().zip(&lengths) {
                assert!(*f == 0 || l > 0);
            }
        }
        assert_eq!(lengths(&fib, 30).iter().max(), Some(&24));
    }

    #[test]
    fn lengths_and_distances_get_the_codes_of_rfc_1951() {
        // (length, code, extra bits, extra value), from the table of §3.2.5.
        for (len, code, n, v) in [
            (3, 257, 0, 0),
            (10, 264, 0, 0),
            (11, 265, 1, 0),
            (12, 265, 1, 1),
            (19, 269, 2, 0),
            (130, 280, 4, 15),
            (131, 281, 5, 0),
            (257, 284, 5, 30),
            (258, 285, 0, 0),
        ] {
            let (lit, extra, _, _) = Symbol::copy(len, 1).codes();
            assert_eq!((lit, extra), (code, (v, n)), "length {len}");
        }
        for (dist, code, n, v) in [
            (1, 0, 0, 0),
            (4, 3, 0, 0),
            (5, 4, 1, 0),
            (6, 4, 1, 1),
            (7, 5, 1, 0),
            (24_577, 29, 13, 0),
            (32_768, 29, 13, 8191),
        ] {
            let (_, _, d, extra) = Symbol::copy(3, dist).codes();
            assert_eq!((d, extra), (code, (v, n)), "distance {dist}");
        }
    }
}
