//! Synthetic images of every RAID-member format (and the other formats the built-in detector
//! knows): the built-in detector must find each, and so must the real `blkid -p` where it is
//! installed. Without blkid the blkid half prints "skipping: blkid is not installed", unless
//! SSDLAB_REQUIRE_PRIVILEGED_TESTS=1 (CI), where a missing blkid fails the test.

mod common;

use common::{Image, MIB};
use ssdlab_target::blkid::{Blkid, Probe};
use ssdlab_target::{detect_signature, SignatureClass};

/// Not a multiple of 4 KiB, so the end-of-device arithmetic is exercised.
const SIZE: u64 = 40 * MIB + 3 * 512;

/// The system's blkid, or `None` after printing why the test skips (or failing when required).
fn system_blkid() -> Option<Blkid> {
    let b = Blkid::system();
    if b.program().is_some() {
        return Some(b);
    }
    ssdlab_testkit::skip("blkid is not installed");
    None
}

fn builtin(img: &Image) -> Option<&'static str> {
    detect_signature(&img.head(), &img.tail(), img.size).map(|s| s.name)
}

#[test]
fn builtin_detector_finds_every_synthetic_image() {
    for size in [SIZE, 64 * MIB, (1 << 30) + 5 * 512] {
        for (_, name, img) in common::all(size) {
            assert_eq!(builtin(&img), Some(name), "{name} on a {size}-byte device");
        }
    }
    assert_eq!(builtin(&Image::new(SIZE)), None);
}

#[test]
fn raid_members_are_named_as_members() {
    for img in [common::isw(SIZE), common::ddf(SIZE), common::jmicron(SIZE)] {
        let s = detect_signature(&img.head(), &img.tail(), img.size).unwrap();
        assert_eq!(s.class, SignatureClass::RaidMember, "{}", s.name);
        assert!(
            s.description.starts_with("a member of "),
            "{}",
            s.description
        );
    }
}

/// A damaged checksum or a missing field makes the built-in detector (like blkid) ignore the
/// metadata: the sanity checks are what keeps random data from looking like a RAID member.
#[test]
fn damaged_metadata_is_not_a_member() {
    let corrupt = |img: Image, at_end: u64, byte: usize| {
        let off = img.size - at_end;
        let mut s = img.read(off, 512);
        s[byte] ^= 0x02; // JMicron accepts a sum of 0 or 1, so change it by 2
        img.put(off, &s)
    };
    let last = 512;
    for (img, at_end, byte) in [
        (common::via(SIZE), last, 10),
        (common::silicon(SIZE), last, 0x20),
        (common::nvidia(SIZE), 2 * last, 40),
        (common::jmicron(SIZE), last, 0x40),
    ] {
        let name = builtin(&img);
        assert!(name.is_some());
        assert_eq!(builtin(&corrupt(img, at_end, byte)), None, "{name:?}");
    }
    // DDF: a bad CRC and a bad revision string.
    let img = common::ddf(SIZE);
    let off = img.size - 512;
    let mut s = img.read(off, 512);
    s[4] ^= 1;
    s[32..40].copy_from_slice(b"garbage!");
    assert_eq!(builtin(&img.clone().put(off, &s)), None);
}

#[test]
fn blkid_recognises_every_synthetic_image() {
    let Some(blkid) = system_blkid() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for (i, (want, name, img)) in common::all(SIZE).into_iter().enumerate() {
        let Some(want) = want else { continue };
        let path = img.write(dir.path(), &format!("{i}-{name}.img"));
        match blkid.probe(&path) {
            Probe::Found(found) => {
                let types: Vec<&str> = found.iter().map(|f| f.type_name.as_str()).collect();
                assert_eq!(types, [want], "{name}: blkid found {found:?}");
                assert!(found[0].signature().is_some(), "{want} has a description");
            }
            other => panic!("{name}: blkid -p answered {other:?}, expected {want}"),
        }
        std::fs::remove_file(&path).unwrap();
        checked += 1;
    }
    assert!(checked >= 30);
    let blank = Image::new(SIZE).write(dir.path(), "blank.img");
    assert_eq!(blkid.probe(&blank), Probe::Nothing);
}

/// An image holding two filesystems: blkid calls it ambivalent (exit status 8), which counts as
/// found, and `-o udev` names both.
#[test]
fn blkid_ambivalent_result_is_found() {
    let Some(blkid) = system_blkid() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut img = common::reiserfs(SIZE);
    img.patches.extend(common::jfs(SIZE).patches);
    let path = img.write(dir.path(), "two.img");
    match blkid.probe(&path) {
        Probe::Found(found) => {
            let mut types: Vec<&str> = found.iter().map(|f| f.type_name.as_str()).collect();
            types.sort();
            assert_eq!(types, ["jfs", "reiserfs"], "{found:?}");
        }
        other => panic!("expected an ambivalent result, got {other:?}"),
    }
    // A RAID member wins over what its data area holds: blkid stops there.
    let mut img = common::isw(SIZE);
    img.patches.extend(common::reiserfs(SIZE).patches);
    let path = img.write(dir.path(), "member.img");
    match blkid.probe(&path) {
        Probe::Found(found) => assert_eq!(found[0].type_name, "isw_raid_member", "{found:?}"),
        other => panic!("expected a signature, got {other:?}"),
    }
}
