//! fio's value syntax, as fio 3.x parses it (`parse.c`), with its ambiguities refused instead of
//! guessed:
//!
//! - **Sizes**: a decimal (or `0x` hex) integer and an optional unit. With `kb_base=1024` (the
//!   default) `k`/`kb`/`ki`, `m`, `g`, `t`, `p` are powers of 1024 and the three-letter IEC
//!   forms `kib`, `mib`, `gib`, `tib`, `pib` powers of **1000** (fio keeps old scripts working
//!   that way); `kb_base=1000` swaps the two. `b` is bytes; case does not matter. `N%` is a
//!   percentage (of the file or device, for `size` and `offset`).
//! - **Times**: an integer and an optional unit `us`/`usec`, `ms`/`msec`, `s`, `m`, `h`, `d`; a
//!   bare number is seconds (or microseconds, for the few options that say so).
//! - **Booleans**: `0` or `1`; a flag without a value is `1`.
//!
//! fio silently reads `1.5k` as 1 byte, `10sec` as 10 microseconds, and ignores anything after
//! a unit (`4k-8k` is 4k for `bs`); ssdlab refuses these with the reason.

/// A size, or a percentage of what it applies to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    Bytes(u64),
    /// Percent, 0 ≤ p ≤ 100.
    Percent(f64),
}

fn split_num(s: &str) -> (&str, &str) {
    let hex = s.len() > 2 && (s.starts_with("0x") || s.starts_with("0X"));
    let end = if hex {
        2 + s[2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(s.len() - 2)
    } else {
        s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len())
    };
    (&s[..end], &s[end..])
}

fn parse_int(num: &str, original: &str) -> Result<u64, String> {
    if num.is_empty() {
        return Err(format!("'{original}' is not a number"));
    }
    let v = if let Some(h) = num.strip_prefix("0x").or_else(|| num.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        num.parse::<u64>()
    };
    v.map_err(|_| format!("'{original}' is too large"))
}

fn fraction_check(rest: &str, original: &str, what: &str) -> Result<(), String> {
    if rest.starts_with('.') {
        return Err(format!(
            "'{original}': fio reads a fraction as its whole part (it would use {}); write a whole number of {what}",
            original.split('.').next().unwrap_or("")
        ));
    }
    Ok(())
}

/// Parses a size with fio's units (`kb_base` 1024 or 1000).
pub fn size(s: &str, kb_base: u64) -> Result<Size, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty value".into());
    }
    if t.starts_with('-') {
        return Err(format!("'{t}' is negative"));
    }
    if t.starts_with('(') {
        return paren_expr(t, kb_base, None).map(Size::Bytes);
    }
    let (num, rest) = split_num(t);
    fraction_check(rest, t, "bytes (or a smaller unit)")?;
    let n = parse_int(num, t)?;
    let unit = rest.trim().to_ascii_lowercase();
    if unit == "%" {
        if n > 100 {
            return Err(format!("'{t}': a percentage must be 0..100"));
        }
        return Ok(Size::Percent(n as f64));
    }
    if unit == "z" {
        return Err(format!(
            "'{t}': zones (fio's zonemode; ssdlab does not model zoned devices)"
        ));
    }
    let other = if kb_base == 1000 { 1024 } else { 1000 };
    let (pow, mult) = match unit.as_str() {
        "" | "b" => (0, 1),
        "k" | "kb" | "ki" => (1, kb_base),
        "m" | "mb" | "mi" => (2, kb_base),
        "g" | "gb" | "gi" => (3, kb_base),
        "t" | "tb" | "ti" => (4, kb_base),
        "p" | "pb" | "pi" => (5, kb_base),
        "kib" => (1, other),
        "mib" => (2, other),
        "gib" => (3, other),
        "tib" => (4, other),
        "pib" => (5, other),
        _ => {
            return Err(format!(
                "'{t}' has an unknown unit '{}' (fio units: k, m, g, t, p, kb…, kib…, b, %)",
                rest.trim()
            ))
        }
    };
    let m = (mult as u128).pow(pow);
    let v = (n as u128)
        .checked_mul(m)
        .filter(|v| *v <= u64::MAX as u128)
        .ok_or_else(|| format!("'{t}' is too large"))?;
    Ok(Size::Bytes(v as u64))
}

/// A size in bytes (no percentage).
pub fn bytes(s: &str, kb_base: u64) -> Result<u64, String> {
    match size(s, kb_base)? {
        Size::Bytes(b) => Ok(b),
        Size::Percent(_) => Err(format!("'{}': a percentage is not allowed here", s.trim())),
    }
}

/// Parses a time into nanoseconds; a bare number is seconds (`bare_us`: microseconds).
pub fn time_ns(s: &str, bare_us: bool) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty value".into());
    }
    if t.starts_with('-') {
        return Err(format!("'{t}' is negative"));
    }
    if t.starts_with('(') {
        return paren_expr(t, 1024, Some(if bare_us { 1_000 } else { 1_000_000_000 }));
    }
    let (num, rest) = split_num(t);
    fraction_check(rest, t, "a smaller unit (1500ms, not 1.5s)")?;
    let n = parse_int(num, t)?;
    let unit = rest.trim().to_ascii_lowercase();
    let mult: u64 = match unit.as_str() {
        "" if bare_us => 1_000,
        "" | "s" => 1_000_000_000,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        "sec" | "secs" | "min" | "mins" => {
            return Err(format!(
                "'{t}': fio 3.x reads '{unit}' as no unit at all (so '10sec' would be 10 microseconds); use s, m, h, d, ms or us"
            ))
        }
        _ => {
            return Err(format!(
                "'{t}' has an unknown time unit '{}' (fio units: us, ms, s, m, h, d)",
                rest.trim()
            ))
        }
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{t}' is too large"))
}

/// A plain integer (decimal or `0x` hex, no unit).
pub fn int(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.starts_with('(') {
        return paren_expr(t, 1024, None);
    }
    let (num, rest) = split_num(t);
    if !rest.is_empty() {
        return Err(format!("'{t}' is not a whole number"));
    }
    parse_int(num, t)
}

/// A plain integer that may be negative (fio's FIO_OPT_INT into a signed value).
pub fn signed_int(s: &str) -> Result<i64, String> {
    let t = s.trim();
    let (neg, rest) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t),
    };
    let v = int(rest)?;
    let v = i64::try_from(v).map_err(|_| format!("'{t}' is too large"))?;
    Ok(if neg { -v } else { v })
}

/// An integer in `lo..=hi`.
pub fn int_in(s: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let v = int(s)?;
    if v < lo || v > hi {
        return Err(format!("{v} is out of range ({lo}..{hi})"));
    }
    Ok(v)
}

/// A boolean: `0`/`1`; no value (a bare flag) is `1`.
pub fn boolean(s: Option<&str>) -> Result<bool, String> {
    match s.map(str::trim) {
        None => Ok(true),
        // (fio: "option … requires an argument")
        Some("") => Err("an empty value (fio refuses it: 0, 1, or the option alone)".into()),
        Some(v) => match int(v) {
            Ok(0) => Ok(false),
            Ok(1) => Ok(true),
            _ => Err(format!("'{v}' is not a boolean (0 or 1)")),
        },
    }
}

/// fio's CPU list (`cpus_allowed=0,5,8-15`): CPUs and inclusive ranges, sorted, each once.
pub fn cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let n = |t: &str| {
            t.parse::<u32>()
                .ok()
                .filter(|&c| c < 4096)
                .ok_or_else(|| format!("'{}': not a CPU list (0,5,8-15)", s.trim()))
        };
        let (a, b) = (n(a)?, n(b)?);
        if a > b {
            return Err(format!("'{}': a CPU range from high to low", s.trim()));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// A size range `MIN-MAX` or `MIN:MAX` (swapped when given the other way round, as fio does).
pub fn range(s: &str, kb_base: u64) -> Result<(u64, u64), String> {
    let t = s.trim();
    let sep = t
        .char_indices()
        .skip(1)
        .find(|(_, c)| *c == '-' || *c == ':')
        .map(|(i, _)| i);
    let (a, b) = match sep {
        Some(i) => (bytes(&t[..i], kb_base)?, bytes(&t[i + 1..], kb_base)?),
        None => {
            let v = bytes(t, kb_base)?;
            (v, v)
        }
    };
    Ok((a.min(b), a.max(b)))
}

/// One direction's `A/B:C/D:…` list of fio's splits (`bssplit`, `zoned`): `A` read with
/// `first`, `B` with `second`; a missing `/B` (or fio's `/0` for a percentage) is `None`.
pub fn split_list<T, U>(
    s: &str,
    mut first: impl FnMut(&str) -> Result<T, String>,
    mut second: impl FnMut(&str) -> Result<Option<U>, String>,
) -> Result<Vec<(T, Option<U>)>, String> {
    let mut out = Vec::new();
    for item in s.split(':') {
        let item = item.trim();
        if item.is_empty() {
            // fio stops at an empty item.
            break;
        }
        let (a, b) = match item.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (item, None),
        };
        let b = match b {
            Some(b) => second(b.trim())?,
            None => None,
        };
        out.push((first(a.trim())?, b));
    }
    Ok(out)
}

/// fio's percentage in a split (`atoi`: more than 100 is 100, 0 or nothing is "not given").
pub fn split_pct(s: &str) -> Result<Option<u32>, String> {
    if s.is_empty() {
        return Ok(None);
    }
    let digits: String = s.chars().take_while(|c| c.is_ascii_digit()).collect();
    let v: u64 = if digits.is_empty() {
        0
    } else {
        digits
            .parse()
            .map_err(|_| format!("'{s}' is not a percentage"))?
    };
    Ok(match v.min(100) {
        0 => None,
        p => Some(p as u32),
    })
}

/// fio's per-direction split lists (`str_split_parse`): `A` for every direction, `A,B` read A
/// and write (and trim) B, `A,B,C` each.
pub fn per_ddir_split(s: &str) -> [String; 3] {
    let parts: Vec<&str> = s.splitn(3, ',').collect();
    match parts.as_slice() {
        [a] => [a.to_string(), a.to_string(), a.to_string()],
        [a, b] => [a.to_string(), b.to_string(), b.to_string()],
        [a, b, c] => [a.to_string(), b.to_string(), c.to_string()],
        _ => Default::default(),
    }
}

/// fio's per-direction lists: `A` sets read, write and trim; `A,B` read and write (trim gets B);
/// `A,B,C` each. An empty item keeps that direction's value (`None`).
pub fn per_ddir<T: Clone>(
    s: &str,
    mut f: impl FnMut(&str) -> Result<T, String>,
) -> Result<[Option<T>; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{}': at most three values (read,write,trim)",
            s.trim()
        ));
    }
    let mut out: [Option<T>; 3] = [None, None, None];
    for (i, p) in parts.iter().enumerate() {
        if !p.trim().is_empty() {
            out[i] = Some(f(p)?);
        }
    }
    // Fewer values than directions: the last one given fills the rest.
    if parts.len() < 3 {
        let last = out[parts.len() - 1].clone();
        for o in out.iter_mut().skip(parts.len()) {
            *o = last.clone();
        }
    }
    Ok(out)
}

/// Integer arithmetic as `bc` does it with its default scale 0 (`+ - * / % ^`, unary minus,
/// parentheses; `/` truncates): fio hands a value to `bc` when it had `$pagesize`, `$mb_memory`
/// or `$ncpus` in it and holds an operator (`size=8*1024*$pagesize`). Returns the result as
/// `bc` prints it.
pub fn bc(expr: &str) -> Result<String, String> {
    let toks = tokens(expr, false)?;
    let mut p = Calc {
        toks: &toks,
        i: 0,
        depth: 0,
    };
    let v = p.sum()?;
    if p.i != toks.len() {
        return Err(format!("'{expr}' is not an expression bc reads"));
    }
    match v {
        Num::Int(i) => Ok(i.to_string()),
        Num::Float(_) => Err(format!("'{expr}' is not an expression bc reads")),
    }
}

/// fio's arithmetic in a value written in parentheses (`bs=(2*4k)`, `runtime=(1m+30s)`, fio's
/// `evaluate_arithmetic_expression`): numbers with fio's units (sizes with `kb_base`; or, when
/// `time` gives how many ns a bare number is, times in ns), `+ - * / % ^`, parentheses. The
/// result is truncated to a whole number, as fio truncates it.
pub fn paren_expr(s: &str, kb_base: u64, time: Option<u64>) -> Result<u64, String> {
    let t = s.trim();
    let (toks, units) = tokens_with_units(t, kb_base, time)?;
    let mut p = Calc {
        toks: &toks,
        i: 0,
        depth: 0,
    };
    let mut v = p.sum()?;
    // Without any unit, the whole expression is in the option's bare unit (seconds for most
    // times); with units, bare numbers are plain factors.
    if let (Some(bare), false) = (time, units) {
        v = arith(v, Num::Int(bare as i128), '*')?;
    }
    if p.i != toks.len() {
        return Err(format!("'{t}': cannot read the expression"));
    }
    let f = match v {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    };
    if !f.is_finite() || f < 0.0 || f >= u64::MAX as f64 {
        return Err(format!("'{t}' evaluates to {f}, not a size or time"));
    }
    Ok(match v {
        Num::Int(i) => i as u64,
        Num::Float(f) => f as u64,
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn f(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(Num),
    Op(char),
}

/// Plain numbers and operators (`bc`'s input).
fn tokens(s: &str, floats: bool) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/%^()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c.is_ascii_digit() || (floats && c == '.') {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || (floats && b[i] == b'.')) {
                i += 1;
            }
            let n = &s[start..i];
            out.push(Tok::Num(if n.contains('.') {
                Num::Float(n.parse().map_err(|_| format!("'{n}' is not a number"))?)
            } else {
                Num::Int(n.parse().map_err(|_| format!("'{n}' is too large"))?)
            }));
        } else {
            return Err(format!(
                "'{s}': fio hands this to bc, which reads plain numbers only ('{c}')"
            ));
        }
    }
    Ok(out)
}

/// Numbers with fio's units and operators (fio's arithmetic parser).
fn tokens_with_units(s: &str, kb_base: u64, time: Option<u64>) -> Result<(Vec<Tok>, bool), String> {
    let mut out = Vec::new();
    let mut units = false;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/%^()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            let num = &s[start..i];
            let ustart = i;
            while i < b.len() && (b[i] as char).is_ascii_alphabetic() {
                i += 1;
            }
            let unit = s[ustart..i].to_ascii_lowercase();
            let n: f64 = num
                .parse()
                .map_err(|_| format!("'{s}': '{num}' is not a number"))?;
            units |= !unit.is_empty();
            let mult = match time {
                Some(_) if unit.is_empty() => 1.0,
                Some(_) => time_ns(&format!("1{unit}"), false)? as f64,
                None if unit.is_empty() => 1.0,
                None => bytes(&format!("1{unit}"), kb_base)? as f64,
            };
            let v = n * mult;
            out.push(Tok::Num(if v.fract() == 0.0 && v.abs() < 1e30 {
                Num::Int(v as i128)
            } else {
                Num::Float(v)
            }));
        } else {
            return Err(format!("'{s}': cannot read '{c}' in an expression"));
        }
    }
    Ok((out, units))
}

/// A recursive-descent calculator: sum of products of powers of units.
struct Calc<'a> {
    toks: &'a [Tok],
    i: usize,
    /// Nesting of parentheses, signs and powers so far.
    depth: usize,
}

/// Deepest nesting of parentheses read (a bound on the recursion).
const MAX_NESTING: usize = 64;

impl Calc<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }

    fn sum(&mut self) -> Result<Num, String> {
        let mut v = self.product()?;
        while let Some(Tok::Op(op @ ('+' | '-'))) = self.peek().cloned() {
            self.i += 1;
            let r = self.product()?;
            v = arith(v, r, op)?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<Num, String> {
        let mut v = self.power()?;
        while let Some(Tok::Op(op @ ('*' | '/' | '%'))) = self.peek().cloned() {
            self.i += 1;
            let r = self.power()?;
            v = arith(v, r, op)?;
        }
        Ok(v)
    }

    fn power(&mut self) -> Result<Num, String> {
        let base = self.unary()?;
        if let Some(Tok::Op('^')) = self.peek() {
            self.i += 1;
            // Right-associative, as in bc.
            self.depth += 1;
            if self.depth > MAX_NESTING {
                return Err(format!("more than {MAX_NESTING} powers in a row"));
            }
            let e = self.power();
            self.depth -= 1;
            return arith(base, e?, '^');
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<Num, String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!(
                "more than {MAX_NESTING} nested parentheses or signs"
            ));
        }
        let v = self.unary_inner();
        self.depth -= 1;
        v
    }

    fn unary_inner(&mut self) -> Result<Num, String> {
        match self.peek().cloned() {
            Some(Tok::Op('-')) => {
                self.i += 1;
                Ok(match self.unary()? {
                    Num::Int(i) => Num::Int(-i),
                    Num::Float(f) => Num::Float(-f),
                })
            }
            Some(Tok::Op('+')) => {
                self.i += 1;
                self.unary()
            }
            Some(Tok::Op('(')) => {
                self.i += 1;
                let v = self.sum()?;
                match self.peek() {
                    Some(Tok::Op(')')) => {
                        self.i += 1;
                        Ok(v)
                    }
                    _ => Err("an opening parenthesis is not closed".into()),
                }
            }
            Some(Tok::Num(n)) => {
                self.i += 1;
                Ok(n)
            }
            _ => Err("an operator has nothing to work on".into()),
        }
    }
}

fn arith(a: Num, b: Num, op: char) -> Result<Num, String> {
    let over = || "the expression overflows".to_string();
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        return Ok(Num::Int(match op {
            '+' => x.checked_add(y).ok_or_else(over)?,
            '-' => x.checked_sub(y).ok_or_else(over)?,
            '*' => x.checked_mul(y).ok_or_else(over)?,
            '/' | '%' if y == 0 => return Err("division by zero".into()),
            '/' => x / y,
            '%' => x % y,
            _ => {
                let e = u32::try_from(y).map_err(|_| over())?;
                x.checked_pow(e).ok_or_else(over)?
            }
        }));
    }
    let (x, y) = (a.f(), b.f());
    Ok(Num::Float(match op {
        '+' => x + y,
        '-' => x - y,
        '*' => x * y,
        '/' | '%' if y == 0.0 => return Err("division by zero".into()),
        '/' => x / y,
        '%' => x % y,
        _ => x.powf(y),
    }))
}

/// Why a fio data pattern cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternProblem {
    /// fio refuses it too.
    Invalid(String),
    /// fio reads it; ssdlab does not (`%o` offsets, `'file'` contents).
    Unsupported(String),
}

/// The bytes of an fio data pattern (`buffer_pattern`, `verify_pattern`) as fio 3.33's
/// `parse_and_fill_pattern` reads them: a sequence of `0x…` hex numbers (bytes from the left;
/// an odd count of digits makes the first byte one digit: `0xabc` is `0a bc`; `0xff0x14` is two
/// numbers), decimal numbers (the value's bytes, least significant first, as many as it needs:
/// `-12` is `f4 ff ff ff`, `0` one zero byte) and `"strings"`, concatenated, at most 512 bytes.
pub fn fio_pattern(s: &str) -> Result<Vec<u8>, PatternProblem> {
    const MAX: usize = 512;
    let bad = |why: &str| PatternProblem::Invalid(format!("'{s}': {why}"));
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                let end = s[i + 1..]
                    .find('"')
                    .ok_or_else(|| bad("a string without its closing quote"))?;
                out.extend_from_slice(&b[i + 1..i + 1 + end]);
                i += end + 2;
            }
            b'%' => {
                return Err(PatternProblem::Unsupported(format!(
                    "'{s}': formats (%o, the block's offset) in a pattern"
                )))
            }
            b'\'' => {
                return Err(PatternProblem::Unsupported(format!(
                    "'{s}': a pattern read from a file ('name')"
                )))
            }
            _ if b[i..].len() > 2
                && b[i] == b'0'
                && (b[i + 1] | 0x20) == b'x'
                && b[i + 2].is_ascii_hexdigit() =>
            {
                let start = i + 2;
                let mut end = start;
                while end < b.len() && b[end].is_ascii_hexdigit() {
                    end += 1;
                }
                // `0xff0x14`: the 0 before the next x starts the next number
                if end < b.len() && (b[end] | 0x20) == b'x' && b[end - 1] == b'0' {
                    end -= 1;
                }
                let digits = &s[start..end];
                let (first, rest) = digits.split_at(digits.len() % 2);
                if !first.is_empty() {
                    out.push(u8::from_str_radix(first, 16).map_err(|_| bad("bad hex"))?);
                }
                for k in (0..rest.len()).step_by(2) {
                    out.push(u8::from_str_radix(&rest[k..k + 2], 16).map_err(|_| bad("bad hex"))?);
                }
                i = end;
            }
            _ => {
                // a decimal number, up to the next `0x` (fio looks ahead for one)
                let rest = &s[i..];
                let lim = rest
                    .to_ascii_lowercase()
                    .find("0x")
                    .filter(|&k| k > 0)
                    .unwrap_or(rest.len());
                let part = &rest[..lim];
                let sign = usize::from(part.starts_with(['-', '+']));
                let digits = part[sign..].bytes().take_while(u8::is_ascii_digit).count();
                if digits == 0 {
                    return Err(bad(
                        "fio's patterns are 0x hex numbers, decimal numbers and \"strings\"",
                    ));
                }
                let text = &part[..sign + digits];
                let v: i64 = text.parse().map_err(|_| bad("a number out of range"))?;
                if v > i32::MAX as i64 || v < i32::MIN as i64 {
                    return Err(bad("a decimal number beyond 32 bits (use 0x hex)"));
                }
                let mut u = v as i32 as u32;
                if u == 0 {
                    out.push(0);
                }
                while u != 0 {
                    out.push((u & 0xff) as u8);
                    u >>= 8;
                }
                i += text.len();
            }
        }
        if out.len() > MAX {
            return Err(bad("longer than fio's 512 bytes"));
        }
    }
    if out.is_empty() {
        return Err(bad("an empty pattern"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_like_fio_3() {
        // Checked against fio 3.33 (`fio --parse-only --debug=parse --bs=…`).
        let b = |s| bytes(s, 1024).unwrap();
        assert_eq!(b("4k"), 4096);
        assert_eq!(b("4K"), 4096);
        assert_eq!(b("4kb"), 4096);
        assert_eq!(b("4ki"), 4096);
        assert_eq!(b("4KiB"), 4000);
        assert_eq!(b("1m"), 1 << 20);
        assert_eq!(b("1mi"), 1 << 20);
        assert_eq!(b("0x10"), 16);
        assert_eq!(b("512b"), 512);
        assert_eq!(b("10g"), 10 << 30);
        assert_eq!(bytes("4k", 1000).unwrap(), 4000);
        assert_eq!(bytes("4KiB", 1000).unwrap(), 4096);
        assert_eq!(size("50%", 1024).unwrap(), Size::Percent(50.0));
        // fio accepts 0% (examples/uring-cmd-fdp.fio: offset=0%).
        assert_eq!(size("0%", 1024).unwrap(), Size::Percent(0.0));
        // fio's arithmetic in parentheses, with units.
        assert_eq!(b("(4*1024)"), 4096);
        assert_eq!(b("(2*4k)"), 8192);
        assert_eq!(b("(1m-4k) "), (1 << 20) - 4096);
        assert_eq!(b("((1+1)^3*512)"), 4096);
        assert!(size("8z", 1024).unwrap_err().contains("zonemode"));
        // fio's CPU lists
        assert_eq!(cpu_list("0,5,8-10").unwrap(), vec![0, 5, 8, 9, 10]);
        assert_eq!(cpu_list(" 3 , 1-2,2").unwrap(), vec![1, 2, 3]);
        assert!(cpu_list("4-2").is_err());
        assert!(cpu_list("a").is_err() && cpu_list("").is_err());
        for bad in [
            "1.5k",
            "4k-8k",
            "k",
            "",
            "-4k",
            "4q",
            "(4*",
            "(1/0)",
            "(1-2)",
            "1z",
            "101%",
            "99999999999p",
        ] {
            assert!(bytes(bad, 1024).is_err(), "{bad}");
        }
        assert!(bytes("50%", 1024).is_err());
        let e = bytes("1.5k", 1024).unwrap_err();
        assert!(e.contains("whole part"), "{e}");
    }

    #[test]
    fn times_like_fio_3() {
        let t = |s| time_ns(s, false).unwrap();
        assert_eq!(t("10"), 10_000_000_000);
        assert_eq!(t("10s"), 10_000_000_000);
        assert_eq!(t("10m"), 600_000_000_000);
        assert_eq!(t("1h"), 3_600_000_000_000);
        assert_eq!(t("500ms"), 500_000_000);
        assert_eq!(t("500msec"), 500_000_000);
        assert_eq!(t("20us"), 20_000);
        assert_eq!(t("2M"), 120_000_000_000);
        assert_eq!(time_ns("20", true).unwrap(), 20_000);
        assert_eq!(t("(1m+30s)"), 90_000_000_000);
        assert_eq!(t("(500ms*3)"), 1_500_000_000);
        assert_eq!(t("(2*5)"), 10_000_000_000);
        for bad in ["10sec", "1.5s", "10x", "", "-1"] {
            assert!(time_ns(bad, false).is_err(), "{bad}");
        }
        assert!(time_ns("10sec", false)
            .unwrap_err()
            .contains("10 microseconds"));
    }

    #[test]
    fn bc_like_fio_keywords() {
        // page_fault.fio: size=5*1024*1024*$mb_memory/8, size=8*1024*$pagesize
        assert_eq!(bc("5*1024*1024*16000/8").unwrap(), "10485760000");
        assert_eq!(bc("8*1024*4096").unwrap(), "33554432");
        assert_eq!(bc("7/2").unwrap(), "3");
        assert_eq!(bc("2^10 % 1000").unwrap(), "24");
        assert_eq!(bc("-(3-5)*2").unwrap(), "4");
        assert!(bc("4k*2").unwrap_err().contains("bc"));
        assert!(bc("1/0").is_err());
        assert!(bc(&"(".repeat(5000)).is_err());
        assert!(bc(&"-".repeat(5000)).is_err());
    }

    #[test]
    fn bools_ints_ranges_lists() {
        assert!(boolean(None).unwrap());
        assert!(!boolean(Some("0")).unwrap());
        assert!(boolean(Some(" 1 ")).unwrap());
        assert!(boolean(Some("true")).is_err());
        assert_eq!(int("0x20").unwrap(), 32);
        assert!(int("4k").is_err());
        assert_eq!(range("4k-16k", 1024).unwrap(), (4096, 16384));
        assert_eq!(range("16k:4k", 1024).unwrap(), (4096, 16384));
        assert_eq!(range("4k", 1024).unwrap(), (4096, 4096));
        let l = per_ddir("4k,8k", |s| bytes(s, 1024)).unwrap();
        assert_eq!(l, [Some(4096), Some(8192), Some(8192)]);
        let l = per_ddir(",8k", |s| bytes(s, 1024)).unwrap();
        assert_eq!(l, [None, Some(8192), Some(8192)]);
        let l = per_ddir("1k,2k,3k", |s| bytes(s, 1024)).unwrap();
        assert_eq!(l, [Some(1024), Some(2048), Some(3072)]);
        assert!(per_ddir("1,2,3,4", |s| bytes(s, 1024)).is_err());
    }

    /// Checked against fio 3.33's files: `0xdeadbeef` writes de ad be ef, `0xabc` 0a bc,
    /// `"abc"-12` 61 62 63 f4 ff ff ff.
    #[test]
    fn fio_patterns_are_read_as_fio_reads_them() {
        let ok = |s: &str| fio_pattern(s).unwrap();
        assert_eq!(ok("0xdeadbeef"), [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(ok("0xabc"), [0x0a, 0xbc]);
        assert_eq!(ok("0XFF"), [0xff]);
        assert_eq!(ok("\"abc\"-12"), [b'a', b'b', b'c', 0xf4, 0xff, 0xff, 0xff]);
        assert_eq!(ok("0xff0x14"), [0xff, 0x14]);
        assert_eq!(ok("0"), [0]);
        assert_eq!(ok("256"), [0x00, 0x01]);
        assert_eq!(ok("12\"x\"0x01"), [12, b'x', 1]);
        for bad in ["abc", "\"abc", "", "99999999999", "0x"] {
            assert!(
                matches!(fio_pattern(bad), Err(PatternProblem::Invalid(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            fio_pattern("0xff%o"),
            Err(PatternProblem::Unsupported(_))
        ));
        assert!(matches!(
            fio_pattern("'data.bin'"),
            Err(PatternProblem::Unsupported(_))
        ));
        assert!(fio_pattern(&format!("0x{}", "ab".repeat(513))).is_err());
    }
}
