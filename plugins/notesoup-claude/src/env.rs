//! Everything the binary reads from its environment, read once at start.
//! The rest of the crate takes a [`HostEnv`], so tests pass their own.

use std::path::{Path, PathBuf};

use crate::budget::BudgetConfig;

/// Set to `1` (or `true`/`yes`/`on`) to turn every hook into a no-op, e.g.
/// for one session or for headless and CI runs.
pub const DISABLE_VAR: &str = "NOTESOUP_DISABLE";

/// Set to `1` (or `true`/`yes`/`on`) to have `notesoup mcp` list each tool's
/// `outputSchema` and return `structuredContent`, for MCP clients that keep
/// the text next to it. Off in the plugin: Claude Code 2.1.332 hands the
/// model the structured JSON in place of the text (see docs/claude.md).
pub const MCP_STRUCTURED_VAR: &str = "NOTESOUP_MCP_STRUCTURED";

/// The environment as notesoup uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostEnv {
    /// `$HOME`, else `$USERPROFILE`.
    pub home: Option<PathBuf>,
    /// The notes root: `PI_NOTES_HOME`, else `~/.agents/notes` (core's
    /// rule); `None` when neither is known.
    pub notes_root: Option<PathBuf>,
    /// `${CLAUDE_PLUGIN_DATA}`: where the plugin keeps its records.
    pub plugin_data: Option<PathBuf>,
    /// `$XDG_CACHE_HOME/notesoup` (an absolute `XDG_CACHE_HOME`), else
    /// `~/.cache/notesoup` (core's [`notesoup_core::plumbing::BootCaches::dir`]):
    /// where boots and hooks keep their caches.
    pub cache: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub claude_dir: Option<PathBuf>,
    /// `${CLAUDE_PROJECT_DIR}`: the session's project (MCP server).
    pub project_dir: Option<PathBuf>,
    /// `NOTESOUP_DISABLE` is on.
    pub disabled: bool,
    /// `NOTESOUP_MCP_STRUCTURED` is on.
    pub mcp_structured: bool,
    /// Budget overrides and switches.
    pub budget: BudgetConfig,
}

fn flag(value: Option<String>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}

fn number(value: Option<String>) -> Option<f64> {
    value.and_then(|v| v.trim().parse::<f64>().ok())
}

/// A positive whole number of tokens; anything else counts as unset.
fn tokens(value: Option<String>) -> Option<u64> {
    let raw = number(value)?;
    // Bounded to u32 range before the cast, so it is exact.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    (raw.is_finite() && raw.fract() == 0.0 && raw >= 1.0 && raw <= f64::from(u32::MAX))
        .then_some(raw as u64)
}

impl HostEnv {
    /// Reads the environment through `get` (`std::env::var` in the binary).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let path = |name: &str| get(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = path("HOME").or_else(|| path("USERPROFILE"));
        let claude_dir =
            path("CLAUDE_CONFIG_DIR").or_else(|| home.as_ref().map(|h| h.join(".claude")));
        let cache = notesoup_core::plumbing::BootCaches::dir(&get);
        Self {
            notes_root: notesoup_core::notes::NotesIdentity::default_root(&get),
            plugin_data: path("CLAUDE_PLUGIN_DATA"),
            cache,
            project_dir: path("CLAUDE_PROJECT_DIR"),
            disabled: flag(get(DISABLE_VAR)),
            mcp_structured: flag(get(MCP_STRUCTURED_VAR)),
            budget: BudgetConfig {
                context_window: tokens(get("CLAUDE_PLUGIN_OPTION_CONTEXT_WINDOW_TOKENS")),
                reserve: number(get("CLAUDE_PLUGIN_OPTION_RESERVE_TOKENS")),
                reminder_margin: tokens(get("CLAUDE_PLUGIN_OPTION_REMINDER_MARGIN_TOKENS")),
                disable_1m: get("CLAUDE_CODE_DISABLE_1M_CONTEXT").is_some_and(|v| !v.is_empty()),
            },
            home,
            claude_dir,
        }
    }

    /// The process environment.
    pub fn from_process() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// The plugin's data directory: `${CLAUDE_PLUGIN_DATA}` (always set for
    /// hooks and the MCP server), else, for the human command line, the
    /// most recently used `notesoup-*` directory under Claude Code's plugin
    /// data.
    pub fn data_dir(&self) -> Option<PathBuf> {
        if let Some(dir) = &self.plugin_data {
            return Some(dir.clone());
        }
        let parent = self.claude_dir.as_ref()?.join("plugins").join("data");
        std::fs::read_dir(parent)
            .ok()?
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.starts_with(PLUGIN_DATA_PREFIX) && !name.starts_with(MOD_DATA_PREFIX)
            })
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .max()
            .map(|(_, path)| path)
    }

    /// Where boots and hooks keep their caches (the boot shelves, the note
    /// heads, the transcript scans): [`Self::cache`], which outlives the
    /// plugin's data directory (a reinstall, a second plugin directory),
    /// else the data directory. A cache is only ever a shortcut: deleting
    /// it is always safe.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        self.cache.clone().or_else(|| self.data_dir())
    }

    /// Where Claude Code keeps a project's transcripts:
    /// `<claude dir>/projects/<cwd with every non-alphanumeric char as '-'>`.
    pub fn transcripts_dir(&self, cwd: &Path) -> Option<PathBuf> {
        Some(
            self.claude_dir
                .as_ref()?
                .join("projects")
                .join(project_slug(cwd)),
        )
    }
}

/// Claude Code names a plugin's data directory `<plugin>-<marketplace>`.
const PLUGIN_DATA_PREFIX: &str = "notesoup-";
/// The reset mod's data directory prefix (plugin `notesoup-reset`).
const MOD_DATA_PREFIX: &str = "notesoup-reset-";

/// The notesoup plugin's data directory seen from the reset mod's: the
/// sibling `notesoup-<marketplace>` of `notesoup-reset-<marketplace>`, so
/// the mod and the hooks share one set of session records. Any other
/// directory is taken as it is.
pub fn notesoup_data_for_mod(mod_data: &Path) -> PathBuf {
    let name = mod_data.file_name().map(|n| n.to_string_lossy());
    match name
        .as_deref()
        .and_then(|n| n.strip_prefix(MOD_DATA_PREFIX))
    {
        Some(marketplace) => mod_data.with_file_name(format!("{PLUGIN_DATA_PREFIX}{marketplace}")),
        None => mod_data.to_owned(),
    }
}

/// Claude Code's directory name for a project: the absolute cwd with every
/// character outside `[A-Za-z0-9]` replaced by `-`.
pub fn project_slug(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_environment_is_read_once_into_one_record() {
        let vars: HashMap<&str, &str> = HashMap::from([
            ("HOME", "/home/u"),
            ("CLAUDE_PLUGIN_DATA", "/d"),
            ("NOTESOUP_DISABLE", "yes"),
            ("CLAUDE_PLUGIN_OPTION_CONTEXT_WINDOW_TOKENS", "300000"),
            ("CLAUDE_PLUGIN_OPTION_RESERVE_TOKENS", "-5"),
            ("CLAUDE_PLUGIN_OPTION_REMINDER_MARGIN_TOKENS", "1.5"),
            ("PI_NOTES_HOME", ""),
        ]);
        let env = HostEnv::from_lookup(|name| vars.get(name).map(|v| (*v).to_owned()));
        assert_eq!(env.claude_dir, Some(PathBuf::from("/home/u/.claude")));
        assert_eq!(env.plugin_data, Some(PathBuf::from("/d")));
        assert_eq!(env.notes_root, Some(PathBuf::from("/home/u/.agents/notes")));
        assert!(env.disabled);
        assert_eq!(env.budget.context_window, Some(300_000));
        assert_eq!(env.budget.reserve, Some(-5.0));
        assert_eq!(env.budget.reminder_margin, None);
        assert!(!env.budget.disable_1m);
        assert!(!env.mcp_structured);
        // The caches under the home's, apart from the data directory.
        assert_eq!(
            env.cache_dir(),
            Some(PathBuf::from("/home/u/.cache/notesoup"))
        );

        // A switch reads on only as a yes; the 1M switch as any value.
        let vars: HashMap<&str, &str> = HashMap::from([
            ("CLAUDE_PLUGIN_DATA", "/d"),
            ("NOTESOUP_DISABLE", "0"),
            ("NOTESOUP_MCP_STRUCTURED", " On "),
            ("CLAUDE_CODE_DISABLE_1M_CONTEXT", "x"),
        ]);
        let env = HostEnv::from_lookup(|name| vars.get(name).map(|v| (*v).to_owned()));
        assert!(!env.disabled);
        assert!(env.mcp_structured);
        assert!(env.budget.disable_1m);
        // No home to keep caches under: the data directory holds them.
        assert_eq!(env.cache_dir(), Some(PathBuf::from("/d")));
        let env = HostEnv::from_lookup(|name| {
            (name == "CLAUDE_CODE_DISABLE_1M_CONTEXT").then(String::new)
        });
        assert!(!env.budget.disable_1m);
    }

    #[test]
    fn the_mod_shares_the_plugins_records() {
        assert_eq!(
            notesoup_data_for_mod(Path::new("/c/plugins/data/notesoup-reset-notesoup")),
            PathBuf::from("/c/plugins/data/notesoup-notesoup")
        );
        assert_eq!(
            notesoup_data_for_mod(Path::new("/d/own")),
            PathBuf::from("/d/own")
        );
    }

    #[test]
    fn the_fallback_data_dir_is_never_the_mods() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("plugins/data");
        std::fs::create_dir_all(data.join("notesoup-local")).unwrap();
        std::fs::create_dir_all(data.join("notesoup-reset-local")).unwrap();
        let env = HostEnv::from_lookup(|n| {
            (n == "CLAUDE_CONFIG_DIR").then(|| dir.path().to_string_lossy().into_owned())
        });
        assert_eq!(env.data_dir(), Some(data.join("notesoup-local")));
    }

    #[test]
    fn slugs_replace_every_non_alphanumeric_character() {
        assert_eq!(
            project_slug(Path::new("/home/u/my_dir.v2 x")),
            "-home-u-my-dir-v2-x"
        );
        assert_eq!(
            HostEnv::from_lookup(|n| (n == "CLAUDE_CONFIG_DIR").then(|| "/c".to_owned()))
                .transcripts_dir(Path::new("/w/p")),
            Some(PathBuf::from("/c/projects/-w-p"))
        );
    }
}
