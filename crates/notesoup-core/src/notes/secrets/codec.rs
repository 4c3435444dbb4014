//! The decodings and checksums the formats are checked with: base64,
//! CRC32 in base62 (GitHub, npm) and bech32 (age).

/// Decodes standard or URL-safe base64 (padding optional) into `out`,
/// stopping when it is full; `None` for a byte outside both alphabets.
pub(super) fn base64_decode(text: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut bits = 0u32;
    let mut held = 0u32;
    let mut len = 0;
    for &byte in text {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        held += 6;
        if held >= 8 {
            held -= 8;
            if len == out.len() {
                break;
            }
            out[len] = (bits >> held) as u8;
            len += 1;
        }
    }
    Some(len)
}

/// The CRC-32 (IEEE) table, built at compile time.
const CRC32_TABLE: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut index = 0;
    while index < 256 {
        let mut crc = index as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[index] = crc;
        index += 1;
    }
    table
};

fn crc32(bytes: &[u8]) -> u32 {
    !bytes.iter().fold(!0u32, |crc, &byte| {
        CRC32_TABLE[usize::from((crc as u8) ^ byte)] ^ (crc >> 8)
    })
}

/// GitHub's and npm's token checksum: the last 6 characters are the CRC32
/// of the 30 before them, in base62 (`0-9A-Za-z`), zero-padded.
pub(super) fn base62_checksum_valid(token: &[u8]) -> bool {
    let (random, checksum) = token.split_at(token.len() - 6);
    let mut value = 0u64;
    for &byte in checksum {
        let digit = match byte {
            b'0'..=b'9' => byte - b'0',
            b'A'..=b'Z' => byte - b'A' + 10,
            b'a'..=b'z' => byte - b'a' + 36,
            _ => return false,
        };
        value = value * 62 + u64::from(digit);
    }
    value == u64::from(crc32(random))
}

/// A bech32 (BIP 173) checksum over `hrp` and the upper- or lower-case
/// `data` (the part after the separator `1`).
pub(super) fn bech32_valid(hrp: &[u8], data: &[u8]) -> bool {
    const CHARSET: &[u8; 32] = b"qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const GENERATORS: [u32; 5] = [
        0x3b6a_57b2,
        0x2650_8e6d,
        0x1ea1_19fa,
        0x3d42_33dd,
        0x2a14_62b3,
    ];
    let step = |checksum: u32, value: u32| {
        let top = checksum >> 25;
        let mut next = ((checksum & 0x01ff_ffff) << 5) ^ value;
        for (bit, generator) in GENERATORS.iter().enumerate() {
            if (top >> bit) & 1 == 1 {
                next ^= generator;
            }
        }
        next
    };
    let mut checksum = 1u32;
    for &byte in hrp {
        checksum = step(checksum, u32::from(byte >> 5));
    }
    checksum = step(checksum, 0);
    for &byte in hrp {
        checksum = step(checksum, u32::from(byte & 31));
    }
    for &byte in data {
        let Some(value) = CHARSET.iter().position(|&c| c == byte.to_ascii_lowercase()) else {
            return false;
        };
        checksum = step(checksum, value as u32);
    }
    checksum == 1
}

#[cfg(test)]
mod tests {
    use super::base64_decode;

    /// `text` decoded into `room` bytes.
    fn decoded(text: &str, room: usize) -> Option<Vec<u8>> {
        let mut out = vec![0; room];
        let len = base64_decode(text.as_bytes(), &mut out)?;
        out.truncate(len);
        Some(out)
    }

    #[test]
    fn both_alphabets_decode_with_or_without_padding() {
        // 62, 63, 62, 63: 111110 111111 111110 111111.
        assert_eq!(decoded("+/+/", 8), Some(vec![0xfb, 0xff, 0xbf]));
        assert_eq!(decoded("-_-_", 8), Some(vec![0xfb, 0xff, 0xbf]));
        assert_eq!(decoded("YQ==", 8), Some(b"a".to_vec()));
        assert_eq!(decoded("YWI=", 8), Some(b"ab".to_vec()));
        assert_eq!(decoded("YWI", 8), Some(b"ab".to_vec()));
        // Padding ends the text: nothing after it is read.
        assert_eq!(decoded("YQ==*", 8), Some(b"a".to_vec()));
        assert_eq!(decoded("YW*", 8), None);
        // Decoding stops when the room is full.
        assert_eq!(decoded("YWJj", 2), Some(b"ab".to_vec()));
        assert_eq!(decoded("YWJj", 3), Some(b"abc".to_vec()));
    }
}
