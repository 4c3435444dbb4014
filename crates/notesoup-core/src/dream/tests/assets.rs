//! The canonical playbook and skill texts every host ships.

use std::path::Path;

use notesoup_core::dream::DreamAsset;

const PLAYBOOK: &str = DreamAsset::Playbook.text();
const DREAM_SKILL: &str = DreamAsset::DreamSkill.text();
const MEMORY_SKILL: &str = DreamAsset::MemorySkill.text();

fn assets() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
}

/// The `name` and `description` of a skill's YAML frontmatter, checked the
/// way Pi's skill loader checks them.
fn skill_frontmatter(text: &str) -> (String, String) {
    let rest = text
        .strip_prefix("---\n")
        .expect("frontmatter opens the file");
    let (block, _) = rest.split_once("\n---\n").expect("frontmatter is closed");
    let field = |key: &str| {
        block
            .lines()
            .find_map(|line| line.strip_prefix(&format!("{key}: ")))
            .unwrap_or_else(|| panic!("{key} missing"))
            .to_owned()
    };
    (field("name"), field("description"))
}

#[test]
fn skills_are_discoverable_by_pis_loader() {
    for (dir, text) in [("dream", DREAM_SKILL), ("memory", MEMORY_SKILL)] {
        let (name, description) = skill_frontmatter(text);
        assert_eq!(name, dir, "the name matches the skill directory");
        assert!(name.len() <= 64 && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
        assert!(!description.is_empty() && description.len() <= 1024);
        assert!(
            !description.contains(": "),
            "a plain YAML scalar: {description}"
        );
        assert!(assets().join("skills").join(dir).join("SKILL.md").is_file());
    }
    assert_eq!(
        skill_frontmatter(DREAM_SKILL).1,
        "Review and consolidate durable notes using notesoup's shared dream playbook"
    );
}

#[test]
fn the_skill_relative_playbook_path_resolves_to_the_byte_identical_playbook() {
    assert!(DREAM_SKILL.contains("`../../playbook.md`"));
    let resolved = assets().join("skills/dream").join("../../playbook.md");
    assert_eq!(
        std::fs::read(resolved).expect("playbook beside the skills"),
        PLAYBOOK.as_bytes()
    );
    for (path, text) in DreamAsset::ALL.map(|asset| (asset.path(), asset.text())) {
        assert_eq!(
            std::fs::read(assets().join(path)).expect(path),
            text.as_bytes(),
            "{path}"
        );
    }
}

#[test]
fn the_playbook_carries_the_rules() {
    let playbook: &[&str] = &[
        "Notes are record, not memory",
        "## Scope",
        "Session notes are never edited",
        "Other agents' and models' notes are read-only",
        "Human notes must not gain rules in the human's voice",
        "1. **Leave stable notes alone.**",
        "2. **Verify only what a change depends on.**",
        "3. **Merge only genuine duplicates:**",
        "4. **Relocate misfiled notes.**",
        "5. **Preserve meaning and provenance.**",
        "6. **Keep notes under about 200 lines / 8 KB.**",
        "7. **Keep MAPs useful.**",
        "8. **Never physically delete a live note.**",
        "9. **Resolve sync conflicts.**",
        "`<name>.conflict-from-<machine>-<commit>.md`",
        "then I crumple the side note",
        "Then I follow nine rules.",
        "more than **7 days** old",
        "(`lastAccessed`, falling back to `crumpledAt`), **never** through `notes_read`",
        "list the doomed addresses",
        "**inspected:**",
        "**changed:**",
        "**promoted:**",
        "**deleted:**",
        "**unresolved:**",
        "coverage gaps",
        "No false success",
        "as proposals",
    ];
    let dream_skill: &[&str] = &[
        "completely",
        "current session",
        "Ask the human",
        "Never invent write scope",
    ];
    let memory_skill: &[&str] = &[
        "`wipe_memory`",
        "A refusal returns `{ error, code, details? }`",
        "`@project/…`",
        "`@human/…`",
        "`@self/…`",
        "`@model/…`",
        "`notes_search`",
        "`history_read({seq})`",
        "checkpoint",
    ];
    for (name, text, phrases) in [
        ("playbook", PLAYBOOK, playbook),
        ("dream skill", DREAM_SKILL, dream_skill),
        ("memory skill", MEMORY_SKILL, memory_skill),
    ] {
        for phrase in phrases {
            assert!(text.contains(phrase), "{name} lacks {phrase:?}");
        }
    }
}
