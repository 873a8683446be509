//! TPC-C's random data (spec 2.1.6 NURand, 4.3.2 strings, last names, zip
//! codes, "ORIGINAL" data).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/// Spec 4.3.2.3: last names are three syllables picked by the digits of a
/// number in 0..=999.
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// The run-time constants C of NURand (spec 2.1.6).
#[derive(Clone, Copy, Debug)]
pub struct NuRandC {
    pub c_last: i64,
    pub c_id: i64,
    pub ol_i_id: i64,
}

impl NuRandC {
    pub fn random(rng: &mut impl Rng) -> NuRandC {
        NuRandC {
            c_last: rng.gen_range(0..=255),
            c_id: rng.gen_range(0..=1023),
            ol_i_id: rng.gen_range(0..=8191),
        }
    }

    /// C for the run given the C_LAST used at load: spec 2.1.6.1 requires
    /// |C_run - C_load| in 65..=119, and neither 96 nor 112.
    pub fn for_run(c_load_last: i64, rng: &mut impl Rng) -> NuRandC {
        let mut c = NuRandC::random(rng);
        loop {
            let delta = (c.c_last - c_load_last).abs();
            if (65..=119).contains(&delta) && delta != 96 && delta != 112 {
                return c;
            }
            c.c_last = rng.gen_range(0..=255);
        }
    }
}

pub struct TpccRng {
    pub rng: StdRng,
    pub c: NuRandC,
}

impl TpccRng {
    pub fn new(c: NuRandC) -> TpccRng {
        TpccRng {
            rng: StdRng::from_entropy(),
            c,
        }
    }

    pub fn uniform(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.gen_range(lo..=hi)
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
    pub fn nurand(&mut self, a: i64, x: i64, y: i64) -> i64 {
        let c = match a {
            255 => self.c.c_last,
            1023 => self.c.c_id,
            8191 => self.c.ol_i_id,
            _ => 0,
        };
        (((self.uniform(0, a) | self.uniform(x, y)) + c) % (y - x + 1)) + x
    }

    /// Random alphanumeric string of length lo..=hi (a-string, 4.3.2.2).
    pub fn astring(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.gen_range(lo..=hi);
        (0..n)
            .map(|_| ALNUM[self.rng.gen_range(0..ALNUM.len())] as char)
            .collect()
    }

    /// Random numeric string of length lo..=hi (n-string).
    pub fn nstring(&mut self, lo: usize, hi: usize) -> String {
        let n = self.rng.gen_range(lo..=hi);
        (0..n)
            .map(|_| (b'0' + self.rng.gen_range(0..10u8)) as char)
            .collect()
    }

    /// Zip code: 4 random digits then "11111" (4.3.2.7).
    pub fn zip(&mut self) -> String {
        let mut z = self.nstring(4, 4);
        z.push_str("11111");
        z
    }

    /// Two random letters.
    pub fn state(&mut self) -> String {
        (0..2)
            .map(|_| (b'A' + self.rng.gen_range(0..26u8)) as char)
            .collect()
    }

    /// I_DATA / S_DATA: a-string of 26..=50, in 10% of rows with "ORIGINAL"
    /// at a random position (4.3.3.1).
    pub fn data_maybe_original(&mut self) -> String {
        let mut s = self.astring(26, 50);
        if self.rng.gen_range(0..10) == 0 {
            let pos = self.rng.gen_range(0..=s.len() - 8);
            s.replace_range(pos..pos + 8, "ORIGINAL");
        }
        s
    }

    /// Customer last name for the run: NURand(255, 0, 999) (2.5.1.2, 2.6.1.2).
    pub fn run_last_name(&mut self) -> String {
        let n = self.nurand(255, 0, 999);
        last_name(n)
    }

    /// Fixed-point amount with `scale` decimals, uniform in lo..=hi units
    /// of 10^-scale, as text.
    pub fn amount(&mut self, lo: i64, hi: i64, scale: u32) -> String {
        fixed(self.uniform(lo, hi), scale)
    }
}

/// Last name from the three digits of `n` (0..=999).
pub fn last_name(n: i64) -> String {
    let n = n as usize;
    let mut s = String::with_capacity(15);
    s.push_str(SYLLABLES[n / 100]);
    s.push_str(SYLLABLES[(n / 10) % 10]);
    s.push_str(SYLLABLES[n % 10]);
    s
}

/// `v` / 10^scale as a decimal literal (exact, no float).
pub fn fixed(v: i64, scale: u32) -> String {
    let p = 10i64.pow(scale);
    let sign = if v < 0 { "-" } else { "" };
    let a = v.unsigned_abs() as i64;
    if scale == 0 {
        return format!("{sign}{a}");
    }
    format!("{sign}{}.{:0width$}", a / p, a % p, width = scale as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn fixed_point() {
        assert_eq!(fixed(150, 2), "1.50");
        assert_eq!(fixed(-1000, 2), "-10.00");
        assert_eq!(fixed(5, 4), "0.0005");
        assert_eq!(fixed(7, 0), "7");
    }

    #[test]
    fn run_constant_obeys_delta_rule() {
        let mut r = StdRng::seed_from_u64(1);
        for load in 0..=255 {
            let c = NuRandC::for_run(load, &mut r);
            let d = (c.c_last - load).abs();
            assert!((65..=119).contains(&d) && d != 96 && d != 112);
        }
    }

    #[test]
    fn generators_stay_in_range() {
        let mut r = TpccRng::new(NuRandC::random(&mut StdRng::seed_from_u64(2)));
        let mut originals = 0;
        for _ in 0..10_000 {
            let v = r.nurand(1023, 1, 3000);
            assert!((1..=3000).contains(&v));
            let v = r.nurand(8191, 1, 100_000);
            assert!((1..=100_000).contains(&v));
            let d = r.data_maybe_original();
            assert!((26..=50).contains(&d.len()));
            originals += d.contains("ORIGINAL") as u32;
            assert_eq!(r.zip().len(), 9);
        }
        assert!((700..1300).contains(&originals), "{originals}");
    }
}
