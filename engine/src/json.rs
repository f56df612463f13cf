//! JSON text in and out without serde's machinery: a reader that builds a [`Value`] and a
//! writer of JSON text (`Writer`). Plain JSON only: it knows nothing of scenarios, which
//! `scenario_json` reads from a [`Value`] and writes with this `Writer`.
//!
//! The playground ships as WebAssembly, and serde_json's `Deserializer` and `Serializer`
//! (with serde's derived `Serialize` for the scenario, monomorphized once for compact and
//! once for pretty output) were a large part of it. These plain functions do the same work
//! in much less code (BENCHMARKS.md, "Shipped size"):
//!
//! - [`parse`] accepts exactly what `serde_json::from_str::<serde_json::Value>` accepts,
//!   gives the same value (numbers included: it computes floats the way serde_json does
//!   without its `float_roundtrip` feature) and the same error messages with the same line
//!   and column;
//! - the `Writer` writes as serde_json's compact or pretty formatter does: with it,
//!   `scenario_json::scenario` writes a scenario as `serde_json::to_string` (compact) or
//!   `to_string_pretty` would with the derived `Serialize`;
//! - [`value_text`] writes a [`Value`] as serde_json's `Display` does.
//!
//! [`Value`] is the engine's own, not serde_json's: with it, serde_json leaves the shipped
//! wasm (its `Value`'s equality and number formatting, and its map's B-tree code).
//!
//! `tests/json.rs` checks the reader, the scenario writer and `value_text` against
//! serde_json.

use std::fmt;

// ---------------------------------------------------------------------------------------
// Values

/// A JSON value, as serde_json's `Value` (without `arbitrary_precision` or
/// `preserve_order`) holds one: the same variants, numbers and member order, and the same
/// equality.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// A JSON number as serde_json keeps one: a non-negative integer, a negative one, or a
/// finite float.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    PosInt(u64),
    NegInt(i64),
    Float(f64),
}

// Only finite floats are made (a NaN would not equal itself), as serde_json's `Number`.
impl Eq for Number {}

/// An object's members in key order, as serde_json's B-tree map keeps them: a sorted `Vec`,
/// searched in order (objects in a scenario have a handful of members).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Map(Vec<(String, Value)>);

impl Map {
    pub fn new() -> Map {
        Map(Vec::new())
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
    /// Adds a member, or replaces the value of the member of that name.
    pub fn insert(&mut self, key: String, value: Value) {
        match self.0.iter().position(|(k, _)| *k >= key) {
            Some(i) if self.0[i].0 == key => self.0[i].1 = value,
            Some(i) => self.0.insert(i, (key, value)),
            None => self.0.push((key, value)),
        }
    }
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.0.iter().map(|(k, v)| (k, v))
    }
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Number(Number::PosInt(n))
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(if n < 0 {
            Number::NegInt(n)
        } else {
            Number::PosInt(n as u64)
        })
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(Number::PosInt(n)) => Some(*n),
            _ => None,
        }
    }
}

/// serde_json's `Display` for numbers: integers in decimal, floats in the shortest form
/// that reads back the same (zmij, the formatter serde_json itself calls).
impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Number::PosInt(n) => fmt::Display::fmt(&n, f),
            Number::NegInt(n) => fmt::Display::fmt(&n, f),
            Number::Float(x) => f.write_str(zmij::Buffer::new().format_finite(x)),
        }
    }
}

// serde's traits as serde_json's `Value` has them, for the derived `Serialize` and
// `Deserialize` of `Action` (which Rust callers and the tests use; the wasm does not).

impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(Number::PosInt(n)) => s.serialize_u64(*n),
            Value::Number(Number::NegInt(n)) => s.serialize_i64(*n),
            Value::Number(Number::Float(x)) => s.serialize_f64(*x),
            Value::String(v) => s.serialize_str(v),
            Value::Array(items) => s.collect_seq(items),
            Value::Object(map) => {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in map.iter() {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Value;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
                Ok(Value::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
                Ok(Value::from(n))
            }
            fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
                Ok(Value::from(n))
            }
            fn visit_f64<E>(self, x: f64) -> Result<Value, E> {
                Ok(if x.is_finite() {
                    Value::Number(Number::Float(x))
                } else {
                    Value::Null
                })
            }
            fn visit_str<E>(self, v: &str) -> Result<Value, E> {
                Ok(Value::from(v))
            }
            fn visit_string<E>(self, v: String) -> Result<Value, E> {
                Ok(Value::String(v))
            }
            fn visit_none<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
                serde::Deserialize::deserialize(d)
            }
            fn visit_unit<E>(self) -> Result<Value, E> {
                Ok(Value::Null)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Value, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element()? {
                    items.push(v);
                }
                Ok(Value::Array(items))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Value, A::Error> {
                let mut map = Map::new();
                while let Some((k, v)) = m.next_entry()? {
                    map.insert(k, v);
                }
                Ok(Value::Object(map))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// An object's members as serde_json's `Map` has them (a variant's `config` overrides,
/// `compare::Variant`): written as a JSON object, read from one.
impl serde::Serialize for Map {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<'de> serde::Deserialize<'de> for Map {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        match <Value as serde::Deserialize>::deserialize(d)? {
            Value::Object(map) => Ok(map),
            _ => Err(serde::de::Error::custom("invalid type: expected a map")),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
    depth: u8,
}

/// Parses JSON text as `serde_json::from_str::<serde_json::Value>` does; the error is its
/// message.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut r = Reader {
        s: text.as_bytes(),
        i: 0,
        depth: 128,
    };
    let v = r.value()?;
    match r.ws() {
        Some(_) => Err(r.peek_err("trailing characters")),
        None => Ok(v),
    }
}

impl Reader<'_> {
    fn err_at(&self, i: usize, code: &str) -> String {
        let before = &self.s[..i];
        let start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        let line = 1 + before[..start].iter().filter(|&&b| b == b'\n').count();
        format!("{code} at line {line} column {}", i - start)
    }
    /// serde_json's `error`: at the current index.
    fn err(&self, code: &str) -> String {
        self.err_at(self.i, code)
    }
    /// serde_json's `peek_error`: one past the current index.
    fn peek_err(&self, code: &str) -> String {
        self.err_at(self.s.len().min(self.i + 1), code)
    }
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn peek_or_null(&self) -> u8 {
        self.peek().unwrap_or(0)
    }
    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        if c.is_some() {
            self.i += 1;
        }
        c
    }
    fn ws(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.i += 1;
        }
        self.peek()
    }

    fn value(&mut self) -> Result<Value, String> {
        let Some(c) = self.ws() else {
            return Err(self.peek_err("EOF while parsing a value"));
        };
        match c {
            b'n' => self.ident(b"null").map(|()| Value::Null),
            b't' => self.ident(b"true").map(|()| Value::Bool(true)),
            b'f' => self.ident(b"false").map(|()| Value::Bool(false)),
            b'-' => {
                self.i += 1;
                self.number(false)
            }
            b'0'..=b'9' => self.number(true),
            b'"' => {
                self.i += 1;
                self.string().map(Value::String)
            }
            b'[' | b'{' => {
                self.depth -= 1;
                if self.depth == 0 {
                    return Err(self.peek_err("recursion limit exceeded"));
                }
                self.i += 1;
                let v = if c == b'[' {
                    self.array()
                } else {
                    self.object()
                };
                self.depth += 1;
                v
            }
            _ => Err(self.peek_err("expected value")),
        }
    }

    fn ident(&mut self, word: &[u8]) -> Result<(), String> {
        self.i += 1;
        for &expected in &word[1..] {
            match self.next() {
                None => return Err(self.err("EOF while parsing a value")),
                Some(c) if c != expected => return Err(self.err("expected ident")),
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn array(&mut self) -> Result<Value, String> {
        let mut items = Vec::new();
        loop {
            let Some(c) = self.ws() else {
                return Err(self.peek_err("EOF while parsing a list"));
            };
            if c == b']' {
                break;
            }
            if !items.is_empty() {
                if c != b',' {
                    return Err(self.peek_err("expected `,` or `]`"));
                }
                self.i += 1;
                match self.ws() {
                    Some(b']') => return Err(self.peek_err("trailing comma")),
                    Some(_) => {}
                    None => return Err(self.peek_err("EOF while parsing a value")),
                }
            }
            items.push(self.value()?);
        }
        self.i += 1;
        Ok(Value::Array(items))
    }

    fn object(&mut self) -> Result<Value, String> {
        let mut map = Map::new();
        let mut first = true;
        loop {
            let Some(c) = self.ws() else {
                return Err(self.peek_err("EOF while parsing an object"));
            };
            if c == b'}' {
                break;
            }
            if !first {
                if c != b',' {
                    return Err(self.peek_err("expected `,` or `}`"));
                }
                self.i += 1;
                match self.ws() {
                    Some(b'"') => {}
                    Some(b'}') => return Err(self.peek_err("trailing comma")),
                    Some(_) => return Err(self.peek_err("key must be a string")),
                    None => return Err(self.peek_err("EOF while parsing a value")),
                }
            } else if c != b'"' {
                return Err(self.peek_err("key must be a string"));
            }
            first = false;
            self.i += 1;
            let key = self.string()?;
            match self.ws() {
                Some(b':') => self.i += 1,
                Some(_) => return Err(self.peek_err("expected `:`")),
                None => return Err(self.peek_err("EOF while parsing an object")),
            }
            let v = self.value()?;
            map.insert(key, v);
        }
        self.i += 1;
        Ok(Value::Object(map))
    }

    /// After the opening quote.
    fn string(&mut self) -> Result<String, String> {
        let mut out: Vec<u8> = Vec::new();
        loop {
            let start = self.i;
            while let Some(&c) = self.s.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.extend_from_slice(&self.s[start..self.i]);
            match self.peek() {
                None => return Err(self.err("EOF while parsing a string")),
                Some(b'"') => {
                    self.i += 1;
                    // Only whole UTF-8 sequences of the input and encoded code points
                    // were copied.
                    return Ok(String::from_utf8(out).unwrap_or_default());
                }
                Some(b'\\') => {
                    self.i += 1;
                    self.escape(&mut out)?;
                }
                Some(_) => {
                    self.i += 1;
                    return Err(self
                        .err("control character (\\u0000-\\u001F) found while parsing a string"));
                }
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let Some(c) = self.next() else {
            return Err(self.err("EOF while parsing a string"));
        };
        let byte = match c {
            b'"' | b'\\' | b'/' => c,
            b'b' => 8,
            b'f' => 12,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => return self.unicode_escape(out),
            _ => return Err(self.err("invalid escape")),
        };
        out.push(byte);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let Some(digits) = self.s.get(self.i..self.i + 4) else {
            self.i = self.s.len();
            return Err(self.err("EOF while parsing a string"));
        };
        self.i += 4;
        let mut n = 0;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(self.err("invalid escape")),
            };
            n = n * 16 + u32::from(v);
        }
        Ok(n)
    }

    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> Result<(), String> {
        let n = self.hex4()?;
        let code = if (0xDC00..=0xDFFF).contains(&n) {
            return Err(self.err("lone leading surrogate in hex escape"));
        } else if (0xD800..=0xDBFF).contains(&n) {
            for expected in [b'\\', b'u'] {
                match self.peek() {
                    None => return Err(self.err("EOF while parsing a string")),
                    Some(c) => {
                        self.i += 1;
                        if c != expected {
                            return Err(self.err("unexpected end of hex escape"));
                        }
                    }
                }
            }
            let n2 = self.hex4()?;
            if !(0xDC00..=0xDFFF).contains(&n2) {
                return Err(self.err("lone leading surrogate in hex escape"));
            }
            (((n - 0xD800) << 10) | (n2 - 0xDC00)) + 0x1_0000
        } else {
            n
        };
        let ch = char::from_u32(code).unwrap_or('\u{fffd}');
        out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
        Ok(())
    }

    /// serde_json's `parse_integer` and what follows it (without `float_roundtrip`).
    fn number(&mut self, positive: bool) -> Result<Value, String> {
        let Some(c) = self.next() else {
            return Err(self.err("EOF while parsing a value"));
        };
        let mut significand: u64 = 0;
        let mut exponent: i32 = 0;
        match c {
            b'0' => {
                if self.peek_or_null().is_ascii_digit() {
                    return Err(self.peek_err("invalid number"));
                }
            }
            b'1'..=b'9' => {
                significand = u64::from(c - b'0');
                while let c @ b'0'..=b'9' = self.peek_or_null() {
                    let digit = u64::from(c - b'0');
                    match significand
                        .checked_mul(10)
                        .and_then(|s| s.checked_add(digit))
                    {
                        Some(s) if exponent == 0 => significand = s,
                        // Too long for a u64: the remaining digits only scale it.
                        _ => exponent += 1,
                    }
                    self.i += 1;
                }
            }
            _ => return Err(self.err("invalid number")),
        }
        let float = match self.peek_or_null() {
            b'.' => self.decimal(positive, significand, exponent)?,
            b'e' | b'E' => self.exponent(positive, significand, exponent)?,
            _ if exponent != 0 => self.f64_of_parts(positive, significand, exponent)?,
            _ if positive => return Ok(Value::from(significand)),
            _ => {
                let neg = (significand as i64).wrapping_neg();
                if neg >= 0 {
                    -(significand as f64)
                } else {
                    return Ok(Value::from(neg));
                }
            }
        };
        // Finite: out-of-range numbers are errors.
        Ok(Value::Number(Number::Float(float)))
    }

    fn decimal(
        &mut self,
        positive: bool,
        mut significand: u64,
        before: i32,
    ) -> Result<f64, String> {
        self.i += 1;
        let mut after = 0;
        let mut overflowed = false;
        while let c @ b'0'..=b'9' = self.peek_or_null() {
            let digit = u64::from(c - b'0');
            if !overflowed {
                match significand
                    .checked_mul(10)
                    .and_then(|s| s.checked_add(digit))
                {
                    Some(s) => {
                        significand = s;
                        after -= 1;
                    }
                    None => overflowed = true,
                }
            }
            self.i += 1;
        }
        if after == 0 && !overflowed {
            return Err(match self.peek() {
                Some(_) => self.peek_err("invalid number"),
                None => self.peek_err("EOF while parsing a value"),
            });
        }
        let exponent = before + after;
        match self.peek_or_null() {
            b'e' | b'E' => self.exponent(positive, significand, exponent),
            _ => self.f64_of_parts(positive, significand, exponent),
        }
    }

    fn exponent(&mut self, positive: bool, significand: u64, start: i32) -> Result<f64, String> {
        self.i += 1;
        let positive_exp = match self.peek_or_null() {
            b'+' => {
                self.i += 1;
                true
            }
            b'-' => {
                self.i += 1;
                false
            }
            _ => true,
        };
        let mut exp = match self.next() {
            None => return Err(self.err("EOF while parsing a value")),
            Some(c @ b'0'..=b'9') => i32::from(c - b'0'),
            Some(_) => return Err(self.err("invalid number")),
        };
        while let c @ b'0'..=b'9' = self.peek_or_null() {
            self.i += 1;
            match exp
                .checked_mul(10)
                .and_then(|e| e.checked_add(i32::from(c - b'0')))
            {
                Some(e) => exp = e,
                None => {
                    if significand != 0 && positive_exp {
                        return Err(self.err("number out of range"));
                    }
                    while self.peek_or_null().is_ascii_digit() {
                        self.i += 1;
                    }
                    return Ok(if positive { 0.0 } else { -0.0 });
                }
            }
        }
        let exponent = if positive_exp {
            start.saturating_add(exp)
        } else {
            start.saturating_sub(exp)
        };
        self.f64_of_parts(positive, significand, exponent)
    }

    fn f64_of_parts(
        &self,
        positive: bool,
        significand: u64,
        mut exponent: i32,
    ) -> Result<f64, String> {
        let mut f = significand as f64;
        loop {
            let e = exponent.unsigned_abs();
            match (e <= 308).then(|| pow10(e)) {
                Some(pow) => {
                    if exponent >= 0 {
                        f *= pow;
                        if f.is_infinite() {
                            return Err(self.err("number out of range"));
                        }
                    } else {
                        f /= pow;
                    }
                    break;
                }
                None => {
                    if f == 0.0 {
                        break;
                    }
                    if exponent >= 0 {
                        return Err(self.err("number out of range"));
                    }
                    f /= 1e308;
                    exponent += 308;
                }
            }
        }
        Ok(if positive { f } else { -f })
    }
}

/// 10^n rounded to the nearest f64 (ties to even): the value of the literal `1e{n}`, which
/// is what serde_json's table of powers holds. Computed from the exact integer instead of
/// a table: 309 f64s with unpredictable mantissas were 2.4 kB of the wasm's data, about as
/// much after gzip; numbers with a fraction or an exponent are rare in a scenario.
fn pow10(n: u32) -> f64 {
    // 10^n in 32-bit limbs, least significant first.
    let mut limbs: Vec<u32> = vec![1];
    for _ in 0..n {
        let mut carry = 0u64;
        for l in &mut limbs {
            let v = u64::from(*l) * 10 + carry;
            *l = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            limbs.push(carry as u32);
        }
    }
    let bits = 32 * limbs.len() - limbs.last().map_or(32, |l| l.leading_zeros() as usize);
    let bit = |i: usize| u64::from((limbs[i / 32] >> (i % 32)) & 1);
    // The top 64 bits, the lowest set if any bit below them is (so that `as f64` rounds
    // as the exact value would), times 2^shift (exact: a power of two).
    let shift = bits.saturating_sub(64);
    let mut m = (shift..bits).rev().fold(0u64, |m, i| (m << 1) | bit(i));
    if (0..shift).any(|i| bit(i) == 1) {
        m |= 1;
    }
    m as f64 * f64::from_bits((shift as u64 + 1023) << 52)
}

// ---------------------------------------------------------------------------------------
// Writing

/// JSON text as serde_json's compact or pretty formatter writes it.
pub(crate) struct Writer {
    pub(crate) out: String,
    pretty: bool,
    indent: usize,
    /// Nothing written yet in the innermost array or object.
    empty: bool,
}

impl Writer {
    pub(crate) fn new(pretty: bool) -> Writer {
        Writer {
            out: String::new(),
            pretty,
            indent: 0,
            empty: true,
        }
    }
    pub(crate) fn open(&mut self, c: char) {
        self.out.push(c);
        self.indent += 1;
        self.empty = true;
    }
    pub(crate) fn close(&mut self, c: char) {
        self.indent -= 1;
        if !self.empty {
            self.newline();
        }
        self.out.push(c);
        self.empty = false;
    }
    fn newline(&mut self) {
        if self.pretty {
            self.out.push('\n');
            for _ in 0..self.indent {
                self.out.push_str("  ");
            }
        }
    }
    /// Before an array item.
    pub(crate) fn item(&mut self) {
        if !self.empty {
            self.out.push(',');
        }
        self.newline();
        self.empty = false;
    }
    /// Before an object member's value.
    pub(crate) fn key(&mut self, k: &str) -> &mut Self {
        self.item();
        self.str(k);
        self.out.push(':');
        if self.pretty {
            self.out.push(' ');
        }
        self
    }
    pub(crate) fn str(&mut self, s: &str) {
        self.out.push('"');
        for c in s.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                c if c < ' ' => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    let b = c as usize;
                    self.out.push_str("\\u00");
                    self.out.push(HEX[b >> 4] as char);
                    self.out.push(HEX[b & 15] as char);
                }
                c => self.out.push(c),
            }
        }
        self.out.push('"');
    }
    pub(crate) fn u64(&mut self, n: u64) {
        self.out.push_str(&n.to_string());
    }
    pub(crate) fn bool(&mut self, b: bool) {
        self.out.push_str(if b { "true" } else { "false" });
    }
    pub(crate) fn opt_u64(&mut self, n: Option<u64>) {
        match n {
            Some(n) => self.u64(n),
            None => self.out.push_str("null"),
        }
    }
    pub(crate) fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => self.str(s),
            None => self.out.push_str("null"),
        }
    }
    pub(crate) fn ids(&mut self, ids: &[u32]) {
        self.open('[');
        for &id in ids {
            self.item();
            self.u64(id.into());
        }
        self.close(']');
    }
    pub(crate) fn value(&mut self, v: &Value) {
        match v {
            Value::Null => self.out.push_str("null"),
            Value::Bool(b) => self.bool(*b),
            Value::Number(n) => self.out.push_str(&n.to_string()),
            Value::String(s) => self.str(s),
            Value::Array(items) => {
                self.open('[');
                for item in items {
                    self.item();
                    self.value(item);
                }
                self.close(']');
            }
            Value::Object(map) => {
                self.open('{');
                for (k, v) in map.iter() {
                    self.key(k).value(v);
                }
                self.close('}');
            }
        }
    }
}

/// A value's JSON text, as serde_json's `Display` (compact) writes it.
pub fn value_text(v: &Value) -> String {
    let mut w = Writer::new(false);
    w.value(v);
    w.out
}

#[cfg(test)]
mod tests {
    #[test]
    fn powers_of_ten_are_the_literals() {
        for n in 0..=308 {
            let literal: f64 = format!("1e{n}").parse().unwrap();
            assert_eq!(super::pow10(n).to_bits(), literal.to_bits(), "1e{n}");
        }
    }
}
