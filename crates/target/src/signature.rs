//! On-disk signatures (filesystems, partition tables, volumes, RAID members): a pure detector over
//! byte buffers, so it can be tested on synthetic images without root.

/// How many bytes of the start of a device [`detect_signature`] wants.
pub const SIGNATURE_HEAD_LEN: usize = 256 * 1024;
/// How many bytes of the end of a device [`detect_signature`] wants.
pub const SIGNATURE_TAIL_LEN: usize = 128 * 1024;

// ---------------------------------------------------------------------------------------------
// Signatures (pure)
// ---------------------------------------------------------------------------------------------

/// What kind of data a [`Signature`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureClass {
    /// A filesystem (ext4, XFS, btrfs, vfat…).
    Filesystem,
    /// A partition table (GPT, MBR).
    PartitionTable,
    /// Another kind of volume: swap, LUKS, LVM2, MD RAID, bcache, ZFS.
    Volume,
}

/// An on-disk signature found by [`detect_signature`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// Short name: "ext4", "xfs", "GPT", "swap", "LVM2"…
    pub name: &'static str,
    /// Filesystem, partition table or other volume.
    pub class: SignatureClass,
    /// For messages: "an ext4 filesystem", "a swap area", "a partition table (GPT)"…
    pub description: &'static str,
}

pub(crate) const fn fs(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::Filesystem,
        description,
    }
}

pub(crate) const fn vol(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::Volume,
        description,
    }
}

pub(crate) const fn table(name: &'static str, description: &'static str) -> Signature {
    Signature {
        name,
        class: SignatureClass::PartitionTable,
        description,
    }
}

fn bytes_at(buf: &[u8], off: usize, pat: &[u8]) -> bool {
    buf.get(off..off + pat.len()) == Some(pat)
}

fn le16(buf: &[u8], off: usize) -> Option<u16> {
    Some(u16::from_le_bytes(buf.get(off..off + 2)?.try_into().ok()?))
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(buf.get(off..off + 4)?.try_into().ok()?))
}

fn le64(buf: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(buf.get(off..off + 8)?.try_into().ok()?))
}

const MD_MAGIC: u32 = 0xa92b_4efc;
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
const ZFS_UBERBLOCK_MAGIC: u64 = 0x00ba_b10c;

/// ext2/3/4 superblock at 1024 (magic 0xEF53 at 1080), with sanity checks so random data does
/// not look like one; the variant is told apart by feature flags.
fn ext_signature(head: &[u8]) -> Option<Signature> {
    const SB: usize = 1024;
    if le16(head, SB + 56)? != 0xEF53 {
        return None;
    }
    let inodes = le32(head, SB)?;
    let log_block = le32(head, SB + 24)?;
    let rev = le32(head, SB + 76)?;
    if inodes == 0 || log_block > 6 || rev > 1 {
        return None;
    }
    let compat = le32(head, SB + 0x5C)?;
    let incompat = le32(head, SB + 0x60)?;
    let ro_compat = le32(head, SB + 0x64)?;
    // incompat: extents 0x40, 64bit 0x80, mmp 0x100, flex_bg 0x200, …; ro_compat: huge_file 0x8,
    // gdt_csum 0x10, dir_nlink 0x20, extra_isize 0x40, metadata_csum 0x400.
    if incompat & !0x1f != 0 || ro_compat & !0x7 != 0 {
        Some(fs("ext4", "an ext4 filesystem"))
    } else if compat & 0x4 != 0 || incompat & 0x8 != 0 {
        Some(fs("ext3", "an ext3 filesystem"))
    } else {
        Some(fs("ext2", "an ext2 filesystem"))
    }
}

/// A DOS/MBR partition table: 0x55AA at 510, every entry's status byte 0x00 or 0x80, and at least
/// one entry with a type and a length.
fn mbr_signature(head: &[u8]) -> Option<Signature> {
    if !bytes_at(head, 510, &[0x55, 0xAA]) {
        return None;
    }
    let mut used = false;
    for i in 0..4 {
        let e = 446 + 16 * i;
        let status = *head.get(e)?;
        if status != 0 && status != 0x80 {
            return None;
        }
        let ptype = *head.get(e + 4)?;
        let sectors = le32(head, e + 12)?;
        if ptype != 0 && sectors != 0 {
            used = true;
        }
    }
    used.then_some(table("MBR", "a partition table (MBR)"))
}

fn md_at(buf: &[u8], off: usize, major: u32) -> bool {
    le32(buf, off) == Some(MD_MAGIC) && le32(buf, off + 4) == Some(major)
}

/// Looks for a filesystem, partition table or volume signature.
///
/// `head` holds the first bytes of the device (ideally [`SIGNATURE_HEAD_LEN`]; shorter when the
/// device is smaller), `tail` the last bytes (ideally [`SIGNATURE_TAIL_LEN`]), and `size` is the
/// device size in bytes (`tail` ends at `size`). Returns the first signature found.
pub fn detect_signature(head: &[u8], tail: &[u8], size: u64) -> Option<Signature> {
    if bytes_at(head, 0, b"LUKS\xba\xbe") {
        return Some(vol("LUKS", "a LUKS encrypted volume"));
    }
    if bytes_at(head, 0, b"XFSB") {
        return Some(fs("xfs", "an XFS filesystem"));
    }
    if bytes_at(head, 0, b"hsqs") {
        return Some(fs("squashfs", "a squashfs filesystem"));
    }
    if md_at(head, 0, 1) {
        return Some(vol("md-1.1", "an MD RAID member (metadata 1.1)"));
    }
    if md_at(head, 4096, 1) {
        return Some(vol("md-1.2", "an MD RAID member (metadata 1.2)"));
    }
    if (0..4).any(|s| bytes_at(head, s * 512, b"LABELONE")) {
        return Some(vol("LVM2", "an LVM2 physical volume"));
    }
    if bytes_at(head, 4096 + 24, &BCACHE_MAGIC) {
        return Some(vol("bcache", "a bcache device"));
    }
    if bytes_at(head, 65536 + 64, b"_BHRfS_M") {
        return Some(fs("btrfs", "a btrfs filesystem"));
    }
    if let Some(sig) = ext_signature(head) {
        return Some(sig);
    }
    if le32(head, 1024) == Some(0xF2F5_2010) {
        return Some(fs("f2fs", "an f2fs filesystem"));
    }
    for page in [4096usize, 8192, 16384, 65536] {
        if bytes_at(head, page - 10, b"SWAPSPACE2") || bytes_at(head, page - 10, b"SWAP-SPACE") {
            return Some(vol("swap", "a swap area"));
        }
    }
    if bytes_at(head, 32769, b"CD001") {
        return Some(fs("iso9660", "an ISO9660 filesystem"));
    }
    if bytes_at(head, 3, b"NTFS    ") {
        return Some(fs("ntfs", "an NTFS filesystem"));
    }
    if bytes_at(head, 3, b"EXFAT   ") {
        return Some(fs("exfat", "an exFAT filesystem"));
    }
    if bytes_at(head, 510, &[0x55, 0xAA])
        && (bytes_at(head, 54, b"FAT12")
            || bytes_at(head, 54, b"FAT16")
            || bytes_at(head, 82, b"FAT32"))
    {
        return Some(fs("vfat", "a FAT (vfat) filesystem"));
    }
    // ZFS: the uberblock ring of label 0 lives at 128 KiB..256 KiB, 1 KiB slots at least.
    if (0..128).any(|i| le64(head, 131072 + i * 1024) == Some(ZFS_UBERBLOCK_MAGIC)) {
        return Some(vol("zfs", "a ZFS pool member"));
    }
    if bytes_at(head, 512, b"EFI PART") || bytes_at(head, 4096, b"EFI PART") {
        return Some(table("GPT", "a partition table (GPT)"));
    }
    if let Some(sig) = mbr_signature(head) {
        return Some(sig);
    }

    // Signatures at the end of the device.
    let tail_start = size.checked_sub(tail.len() as u64)?;
    let at_end = |off: u64| -> Option<usize> { off.checked_sub(tail_start).map(|o| o as usize) };
    // md 0.90: 64 KiB-aligned, 64 KiB from the end; md 1.0: 4 KiB-aligned, 8 KiB from the end.
    if size >= 131072 {
        if let Some(o) = at_end((size & !0xFFFF) - 0x10000) {
            if md_at(tail, o, 0) {
                return Some(vol("md-0.90", "an MD RAID member (metadata 0.90)"));
            }
        }
    }
    if size >= 16384 {
        if let Some(o) = at_end((((size >> 9) - 16) << 9) & !4095) {
            if md_at(tail, o, 1) {
                return Some(vol("md-1.0", "an MD RAID member (metadata 1.0)"));
            }
        }
    }
    for sector in [512u64, 4096] {
        if size >= sector * 2 {
            if let Some(o) = at_end(size - sector) {
                if bytes_at(tail, o, b"EFI PART") {
                    return Some(table("GPT", "a partition table (GPT)"));
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fill::XorShift;

    fn img(len: usize) -> Vec<u8> {
        vec![0u8; len]
    }

    fn put(buf: &mut [u8], off: usize, pat: &[u8]) {
        buf[off..off + pat.len()].copy_from_slice(pat);
    }

    fn detect_head(head: &[u8]) -> Option<&'static str> {
        detect_signature(head, &[], head.len() as u64).map(|s| s.name)
    }

    fn ext_sb(incompat: u32, compat: u32) -> Vec<u8> {
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 1024, &1000u32.to_le_bytes()); // inodes
        put(&mut b, 1024 + 24, &2u32.to_le_bytes()); // 4 KiB blocks
        put(&mut b, 1080, &0xEF53u16.to_le_bytes());
        put(&mut b, 1024 + 76, &1u32.to_le_bytes()); // dynamic rev
        put(&mut b, 1024 + 0x5C, &compat.to_le_bytes());
        put(&mut b, 1024 + 0x60, &incompat.to_le_bytes());
        b
    }

    #[test]
    fn blank_and_random_have_no_signature() {
        assert_eq!(detect_head(&img(SIGNATURE_HEAD_LEN)), None);
        let mut r = img(SIGNATURE_HEAD_LEN);
        XorShift(12345).fill(&mut r);
        assert_eq!(
            detect_signature(&r, &r[..SIGNATURE_TAIL_LEN], 1 << 30),
            None
        );
        assert_eq!(detect_signature(&[], &[], 0), None);
        assert_eq!(detect_head(&[0u8; 100]), None);
    }

    #[test]
    fn ext_variants() {
        assert_eq!(detect_head(&ext_sb(0x2c2, 0x4)), Some("ext4"));
        assert_eq!(detect_head(&ext_sb(0x2, 0x4)), Some("ext3"));
        assert_eq!(detect_head(&ext_sb(0x2, 0)), Some("ext2"));
        // Magic alone (random data) is not enough.
        let mut b = img(4096);
        put(&mut b, 1080, &0xEF53u16.to_le_bytes());
        assert_eq!(detect_head(&b), None);
    }

    #[test]
    fn simple_magics() {
        let cases: &[(usize, &[u8], &str)] = &[
            (0, b"XFSB", "xfs"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (0, b"hsqs", "squashfs"),
            (65600, b"_BHRfS_M", "btrfs"),
            (4086, b"SWAPSPACE2", "swap"),
            (4086, b"SWAP-SPACE", "swap"),
            (65526, b"SWAPSPACE2", "swap"),
            (3, b"NTFS    ", "ntfs"),
            (3, b"EXFAT   ", "exfat"),
            (512, b"LABELONE", "LVM2"),
            (1024, b"LABELONE", "LVM2"),
            (32769, b"CD001", "iso9660"),
            (1024, &0xF2F5_2010u32.to_le_bytes(), "f2fs"),
            (4096 + 24, &BCACHE_MAGIC, "bcache"),
            (512, b"EFI PART", "GPT"),
            (4096, b"EFI PART", "GPT"),
            (131072 + 5 * 1024, &ZFS_UBERBLOCK_MAGIC.to_le_bytes(), "zfs"),
        ];
        for (off, pat, name) in cases {
            let mut b = img(SIGNATURE_HEAD_LEN);
            put(&mut b, *off, pat);
            assert_eq!(detect_head(&b), Some(*name), "{name} at {off}");
        }
    }

    #[test]
    fn fat_needs_boot_signature() {
        let mut b = img(4096);
        put(&mut b, 54, b"FAT16   ");
        assert_eq!(detect_head(&b), None);
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), Some("vfat"));
        let mut b = img(4096);
        put(&mut b, 82, b"FAT32   ");
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), Some("vfat"));
    }

    #[test]
    fn mbr_needs_a_used_entry() {
        let mut b = img(4096);
        put(&mut b, 510, &[0x55, 0xAA]);
        assert_eq!(detect_head(&b), None, "empty table");
        put(&mut b, 446 + 16 + 4, &[0x83]);
        put(&mut b, 446 + 16 + 8, &2048u32.to_le_bytes());
        put(&mut b, 446 + 16 + 12, &4096u32.to_le_bytes());
        assert_eq!(detect_head(&b), Some("MBR"));
        b[446] = 0x17; // invalid status byte: boot code, not a table
        assert_eq!(detect_head(&b), None);
    }

    #[test]
    fn md_superblocks() {
        let mut md = Vec::new();
        md.extend_from_slice(&MD_MAGIC.to_le_bytes());
        md.extend_from_slice(&1u32.to_le_bytes());
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 4096, &md);
        assert_eq!(detect_head(&b), Some("md-1.2"));
        let mut b = img(SIGNATURE_HEAD_LEN);
        put(&mut b, 0, &md);
        assert_eq!(detect_head(&b), Some("md-1.1"));

        // At the end: a 10 MiB + 3 KiB device.
        let size: u64 = 10 * 1024 * 1024 + 3072;
        let head = img(SIGNATURE_HEAD_LEN);
        let tail_start = size - SIGNATURE_TAIL_LEN as u64;
        let mut tail = img(SIGNATURE_TAIL_LEN);
        let off10 = ((((size >> 9) - 16) << 9) & !4095) - tail_start;
        put(&mut tail, off10 as usize, &md);
        assert_eq!(
            detect_signature(&head, &tail, size).map(|s| s.name),
            Some("md-1.0")
        );
        let mut tail = img(SIGNATURE_TAIL_LEN);
        let mut md090 = md.clone();
        md090[4..8].copy_from_slice(&0u32.to_le_bytes());
        let off090 = ((size & !0xFFFF) - 0x10000) - tail_start;
        put(&mut tail, off090 as usize, &md090);
        assert_eq!(
            detect_signature(&head, &tail, size).map(|s| s.name),
            Some("md-0.90")
        );
    }

    #[test]
    fn gpt_backup_header_at_end() {
        let size: u64 = 1 << 24;
        let mut tail = img(SIGNATURE_TAIL_LEN);
        put(&mut tail, SIGNATURE_TAIL_LEN - 512, b"EFI PART");
        let s = detect_signature(&img(SIGNATURE_HEAD_LEN), &tail, size).unwrap();
        assert_eq!((s.name, s.class), ("GPT", SignatureClass::PartitionTable));
    }
}
