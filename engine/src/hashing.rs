//! Kafka's hashing, bit for bit: `Utils.murmur2` (the producer's key hash), `Utils.toPositive`,
//! `Utils.abs`, Java's `String.hashCode`, and the two rules built on them: the partition of a
//! key (`BuiltInPartitioner.partitionForKey`) and the fetcher thread of a partition
//! (`AbstractFetcherManager.getFetcherId`).
//!
//! Java's `int` is an `i32` here, its arithmetic wraps (`wrapping_*`), and its unsigned shift
//! `>>>` is a shift of the same bits as a `u32`. Each value a test expects comes from Kafka's
//! own tests or is worked by hand in the test's comments.

/// Utils.murmur2: the 32-bit murmur2 hash of `data`, with Kafka's seed `0x9747b28c`.
pub(crate) fn murmur2(data: &[u8]) -> i32 {
    let length = data.len();
    let seed: u32 = 0x9747_b28c;
    // 'm' and 'r' are mixing constants generated offline (Kafka's comment).
    let m: u32 = 0x5bd1_e995;
    let r = 24;

    // Initialize the hash to a random value: `seed ^ length`, length as a Java int (a Java
    // array is never longer than `Integer.MAX_VALUE`, so the cast loses nothing there).
    let mut h: u32 = seed ^ (length as u32);
    let length4 = length / 4;

    for i in 0..length4 {
        let i4 = i * 4;
        // Little-endian: data[i4] is the lowest byte. Kafka adds the shifted bytes; they do
        // not overlap, so the sum is this OR.
        let mut k: u32 = u32::from(data[i4])
            | (u32::from(data[i4 + 1]) << 8)
            | (u32::from(data[i4 + 2]) << 16)
            | (u32::from(data[i4 + 3]) << 24);
        k = k.wrapping_mul(m);
        k ^= k >> r; // k >>> r
        k = k.wrapping_mul(m);
        h = h.wrapping_mul(m);
        h ^= k;
    }

    // Handle the last few bytes of the input array: Kafka's `switch (length % 4)` falls
    // through from case 3 to case 2 to case 1, and only case 1 multiplies.
    let tail = length & !3;
    let rest = length % 4;
    if rest >= 3 {
        h ^= u32::from(data[tail + 2]) << 16;
    }
    if rest >= 2 {
        h ^= u32::from(data[tail + 1]) << 8;
    }
    if rest >= 1 {
        h ^= u32::from(data[tail]);
        h = h.wrapping_mul(m);
    }

    h ^= h >> 13; // h >>> 13
    h = h.wrapping_mul(m);
    h ^= h >> 15; // h >>> 15

    h as i32
}

/// Utils.toPositive: `number & 0x7fffffff`. Not the absolute value: a negative number loses
/// its sign bit only (-1 becomes `Integer.MAX_VALUE`).
pub(crate) fn to_positive(number: i32) -> i32 {
    number & 0x7fff_ffff
}

/// Utils.abs: the absolute value, except that `Integer.MIN_VALUE` (which has none) gives 0
/// where `Math.abs` would give `Integer.MIN_VALUE` back.
pub(crate) fn utils_abs(n: i32) -> i32 {
    if n == i32::MIN {
        0
    } else {
        n.abs()
    }
}

/// java.lang.String.hashCode: `h = 31 * h + c` over the string's UTF-16 code units, in Java
/// `int` arithmetic (wrapping). A character outside the Basic Multilingual Plane counts as its
/// two surrogates, as Java stores it.
pub(crate) fn java_string_hash(s: &str) -> i32 {
    let mut h: i32 = 0;
    for unit in s.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(i32::from(unit));
    }
    h
}

/// BuiltInPartitioner.partitionForKey: `Utils.toPositive(Utils.murmur2(serializedKey)) %
/// numPartitions`, the partition of a keyed record (KafkaProducer.partition calls it with the
/// topic's partition count).
///
/// `num_partitions` must be at least 1 (Java would throw `ArithmeticException`); a topic's
/// partition count is validated before the producer sees it.
pub fn partition_for_key(key: &[u8], num_partitions: u32) -> u32 {
    assert!(num_partitions > 0, "a topic has at least one partition");
    // toPositive's result is in 0..=i32::MAX, so it is the same number as a u32.
    (to_positive(murmur2(key)) as u32) % num_partitions
}

/// AbstractFetcherManager.getFetcherId: `Utils.abs(31 * topic.hashCode() + partition) %
/// numFetchersPerBroker`, in Java `int` arithmetic: which of a broker's fetcher threads
/// towards one leader (`num.replica.fetchers` of them) follows the partition.
///
/// `partition` is a Kafka partition index (a Java `int`, so at most `i32::MAX`) and
/// `num_fetchers` at least 1 (`num.replica.fetchers`); the engine's configs are validated
/// before a broker sees them.
pub(crate) fn fetcher_id(topic: &str, partition: u32, num_fetchers: u32) -> u32 {
    assert!(num_fetchers > 0, "num.replica.fetchers is at least 1");
    let partition = i32::try_from(partition).expect("a partition index is a Java int");
    let mixed = java_string_hash(topic)
        .wrapping_mul(31)
        .wrapping_add(partition);
    // Utils.abs's result is in 0..=i32::MAX, so it is the same number as a u32.
    (utils_abs(mixed) as u32) % num_fetchers
}

#[cfg(test)]
mod tests {
    use super::*;

    /// UtilsTest.testMurmur2: Kafka's expected values, literally. Between them they take the
    /// loop over four-byte blocks and the tails of 0, 2 and 3 bytes.
    #[test]
    fn test_murmur2() {
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973_932_308),
            (b"foobar", -790_332_482),
            (b"a-little-bit-long-string", -985_981_536),
            (b"a-little-bit-longer-string", -1_486_304_829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58_897_971,
            ),
            // Kafka writes this one `new byte[] {'a', 'b', 'c'}`.
            (b"abc", 479_470_107),
        ];
        for (data, expected) in cases {
            assert_eq!(murmur2(data), expected, "murmur2({data:?})");
        }
    }

    /// The one-byte tail (`case 1` alone), which UtilsTest's inputs do not reach, worked by hand
    /// (products mod 2^32; m = 0x5bd1e995):
    ///   h = 0x9747b28c ^ 1           = 0x9747b28d    (seed ^ length)
    ///   h ^= 'a' (0x61)              = 0x9747b2ec
    ///   h *= m                       = 0x453fef5c
    ///   h ^= h >>> 13 (0x000229ff)   = 0x453dc6a3
    ///   h *= m                       = 0xa2d1f7df
    ///   h ^= h >>> 15 (0x000145a3)   = 0xa2d0b27c    = -1563381124 as a Java int
    #[test]
    fn murmur2_of_one_byte_takes_the_last_case_alone() {
        assert_eq!(murmur2(b"a"), -1_563_381_124);
        assert_eq!(0xa2d0_b27c_u32 as i32, -1_563_381_124);
    }

    /// The empty input: no block, no tail, only the final mix, worked by hand:
    ///   h = 0x9747b28c ^ 0                = 0x9747b28c
    ///   h ^= h >>> 13 (0x0004ba3d)        = 0x974308b1
    ///   h *= m                            = 0x106e2805
    ///   h ^= h >>> 15 (0x000020dc)        = 0x106e08d9    = 275646681
    #[test]
    fn murmur2_of_nothing_is_the_seed_mixed() {
        assert_eq!(murmur2(b""), 275_646_681);
        assert_eq!(0x106e_08d9, 275_646_681);
    }

    /// UtilsTest.testAbs, literally.
    #[test]
    fn test_abs() {
        assert_eq!(utils_abs(i32::MIN), 0);
        assert_eq!(utils_abs(-10), 10);
        assert_eq!(utils_abs(10), 10);
        assert_eq!(utils_abs(0), 0);
        assert_eq!(utils_abs(-1), 1);
    }

    /// Utils.toPositive by its definition (`number & 0x7fffffff`): a positive number is
    /// itself; -1 (0xffffffff) keeps all but the sign bit, 0x7fffffff = 2147483647;
    /// Integer.MIN_VALUE (0x80000000) keeps nothing.
    #[test]
    fn to_positive_clears_the_sign_bit_only() {
        assert_eq!(to_positive(5), 5);
        assert_eq!(to_positive(0), 0);
        assert_eq!(to_positive(i32::MAX), 2_147_483_647);
        assert_eq!(to_positive(-1), 2_147_483_647);
        assert_eq!(to_positive(i32::MIN), 0);
        // A negative n becomes n + 2^31: -10 + 2147483648 = 2147483638, not 10.
        assert_eq!(to_positive(-10), 2_147_483_638);
    }

    /// String.hashCode, worked by hand (31 * h + c over UTF-16 code units).
    #[test]
    fn java_string_hash_of_known_strings() {
        // No code unit: 0.
        assert_eq!(java_string_hash(""), 0);
        // 'a' = 97.
        assert_eq!(java_string_hash("a"), 97);
        // "hello": 104; 104*31 + 101 = 3325; 3325*31 + 108 = 103183;
        // 103183*31 + 108 = 3198781; 3198781*31 + 111 = 99162322.
        assert_eq!(java_string_hash("hello"), 99_162_322);
        // "é" is one UTF-16 unit, U+00E9 = 233 (its UTF-8 bytes 0xC3 0xA9 would give
        // 195*31 + 169 = 6214).
        assert_eq!(java_string_hash("é"), 233);
        // "😀" is U+1F600, outside the BMP, so two code units: 0x1F600 - 0x10000 = 0xF600;
        // high surrogate 0xD800 + (0xF600 >> 10) = 0xD800 + 0x3D = 0xD83D = 55357;
        // low surrogate 0xDC00 + (0xF600 & 0x3FF) = 0xDC00 + 0x200 = 0xDE00 = 56832.
        // 55357*31 + 56832 = 1716067 + 56832 = 1772899.
        assert_eq!(java_string_hash("😀"), 1_772_899);
    }

    /// String.hashCode past 2^31, worked by hand (a value v past the int range wraps to
    /// v mod 2^32, read as signed):
    ///   'p' 112                                 = 112
    ///   'a' 112*31 + 97                         = 3569
    ///   'y' 3569*31 + 121                       = 110760
    ///   'm' 110760*31 + 109                     = 3433669
    ///   'e' 3433669*31 + 101                    = 106443840
    ///   'n' 106443840*31 + 110 = 3299759150 - 2^32            = -995208146
    ///   't' -995208146*31 + 116 = -30851452410 + 8 * 2^32     = -786681338
    ///   's' -786681338*31 + 115 = -24387121363 + 6 * 2^32     = 1382682413
    #[test]
    fn java_string_hash_wraps_as_a_java_int() {
        assert_eq!(java_string_hash("payments"), 1_382_682_413);
    }

    /// DefaultPartitionerTest.testKeyPartitionIsStable: the same key gives the same partition
    /// (its topic has three partitions).
    #[test]
    fn test_key_partition_is_stable() {
        let partition = partition_for_key(b"key", 3);
        assert_eq!(partition, partition_for_key(b"key", 3));
        assert!(partition < 3);
    }

    /// BuiltInPartitioner.partitionForKey over UtilsTest.testMurmur2's keys, worked by hand:
    /// toPositive(n) of a negative n is n + 2^31 = n + 2147483648; modulo 10 is the last digit,
    /// modulo 3 the digit sum's remainder.
    #[test]
    fn partition_for_key_of_kafkas_murmur2_keys() {
        let cases: [(&[u8], u32, u32); 6] = [
            // -973932308 + 2147483648 = 1173551340; digits sum to 30.
            (b"21", 0, 0),
            // -790332482 + 2147483648 = 1357151166; digits sum to 36.
            (b"foobar", 6, 0),
            // -985981536 + 2147483648 = 1161502112; digits sum to 20, 20 mod 3 = 2.
            (b"a-little-bit-long-string", 2, 2),
            // -1486304829 + 2147483648 = 661178819; digits sum to 47, 47 mod 3 = 2.
            (b"a-little-bit-longer-string", 9, 2),
            // -58897971 + 2147483648 = 2088585677; digits sum to 56, 56 mod 3 = 2.
            (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", 7, 2),
            // 479470107 is positive, itself; digits sum to 39.
            (b"abc", 7, 0),
        ];
        for (key, of_ten, of_three) in cases {
            assert_eq!(partition_for_key(key, 10), of_ten, "{key:?} of 10");
            assert_eq!(partition_for_key(key, 3), of_three, "{key:?} of 3");
            assert_eq!(partition_for_key(key, 1), 0, "{key:?} of 1");
        }
    }

    /// AbstractFetcherManager.getFetcherId for topic "rep", worked by hand:
    /// "rep".hashCode = (114*31 + 101)*31 + 112 = 3635*31 + 112 = 112797;
    /// partition 0: 31*112797 + 0 = 3496707 (odd); partition 1: 3496708 (even).
    #[test]
    fn fetcher_id_of_rep() {
        assert_eq!(java_string_hash("rep"), 112_797);
        assert_eq!(fetcher_id("rep", 0, 1), 0);
        assert_eq!(fetcher_id("rep", 0, 2), 1);
        assert_eq!(fetcher_id("rep", 1, 1), 0);
        assert_eq!(fetcher_id("rep", 1, 2), 0);
        // 3496707: digits sum to 36, so 0 of 3; 3496708 is 1 of 3.
        assert_eq!(fetcher_id("rep", 0, 3), 0);
        assert_eq!(fetcher_id("rep", 1, 3), 1);
    }

    /// getFetcherId where `31 * hashCode` leaves the int range, so Utils.abs meets a negative
    /// number, worked by hand: "payments".hashCode = 1382682413 (above);
    /// 31 * 1382682413 = 42863154803 - 10 * 2^32 = -86518157; Utils.abs gives 86518157,
    /// odd, digits summing to 41 (41 mod 3 = 2). Partition 1: -86518156, abs 86518156, even,
    /// digits 40 (1 of 3).
    #[test]
    fn fetcher_id_past_the_int_range() {
        assert_eq!(fetcher_id("payments", 0, 1), 0);
        assert_eq!(fetcher_id("payments", 0, 2), 1);
        assert_eq!(fetcher_id("payments", 0, 3), 2);
        assert_eq!(fetcher_id("payments", 1, 2), 0);
        assert_eq!(fetcher_id("payments", 1, 3), 1);
    }
}
