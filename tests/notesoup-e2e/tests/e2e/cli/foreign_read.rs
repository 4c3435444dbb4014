//! Reading does not rewrite: a read of a note in another agent's home
//! records only its access, and never gives a note fields it did not have.

use super::{Bin, Machine};

#[test]
fn a_read_in_another_agent_s_home_writes_only_the_access_fields() {
    let machine = Machine::new();
    let home = machine.notes().join("agents/someone-else");
    std::fs::create_dir_all(&home).unwrap();
    let plain = home.join("plain.md");
    let partial = home.join("partial.md");
    std::fs::write(&plain, "just text, written by hand\n").unwrap();
    std::fs::write(&partial, "---\ntitle: kept as it is\n---\n\nthe body\n").unwrap();
    for (count, bin) in (1..).zip(Bin::ALL) {
        let read = machine.run(bin, &["notes", "read", "@agents/someone-else/plain.md"]);
        assert!(
            read.ok().contains("just text, written by hand"),
            "{bin:?}: {read:?}"
        );
        assert_eq!(
            std::fs::read_to_string(&plain).unwrap(),
            "just text, written by hand\n",
            "{bin:?}: a note without frontmatter is left as it is"
        );

        let read = machine.run(bin, &["notes", "read", "@agents/someone-else/partial.md"]);
        assert!(read.ok().contains("the body"), "{bin:?}: {read:?}");
        let text = std::fs::read_to_string(&partial).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..2],
            ["---", "title: kept as it is"],
            "{bin:?}: {text}"
        );
        assert!(lines[2].starts_with("lastAccessed: "), "{bin:?}: {text}");
        assert_eq!(lines[3], format!("accessCount: {count}"), "{bin:?}: {text}");
        assert_eq!(lines[4..], ["---", "", "the body"], "{bin:?}: {text}");
    }
}
