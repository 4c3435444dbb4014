//! The boot snapshot: each of the five homes read once, a failing home
//! isolated, and the time captured before loading.

use jiff::Timestamp;

/// One of the five notes homes, in the order the snapshot loads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Home {
    /// This session's notes (bare paths).
    Session,
    /// `@project/`.
    Project,
    /// `@human/`.
    Human,
    /// `@self/`, the current agent's home.
    Agent,
    /// `@model/`, the current model's home.
    Model,
}

impl Home {
    /// The load order: session, project, human, agent, model.
    pub const LOAD_ORDER: [Home; 5] = [
        Home::Session,
        Home::Project,
        Home::Human,
        Home::Agent,
        Home::Model,
    ];

    /// The short name hosts use in notices (`session`, `@project`, …).
    pub fn label(self) -> &'static str {
        match self {
            Home::Session => "session",
            Home::Project => "@project",
            Home::Human => "@human",
            Home::Agent => "@self",
            Home::Model => "@model",
        }
    }
}

/// A home's MAP: its table of contents, inlined in the boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapPage {
    /// The rendered address, e.g. `@project/MAP.md`.
    pub address: String,
    /// The whole body (the renderer caps it).
    pub body: String,
}

/// One of a shelf's freshest pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreshPage {
    /// The rendered address.
    pub address: String,
    /// See [`super::page_title`]; empty when the body has no text.
    pub title: String,
    /// The note's `updatedAt`.
    pub updated_at: Timestamp,
}

/// What the snapshot holds for one home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HomeShelf {
    /// The home was listed (a missing directory lists as empty).
    Loaded {
        /// The root `MAP.md`, when there is one.
        map: Option<MapPage>,
        /// Up to [`super::SHELF_FRESH_LIMIT`] of the freshest other notes,
        /// freshest first.
        fresh: Vec<FreshPage>,
    },
    /// A filesystem error kept the home from being listed.
    Unavailable,
}

/// Everything a boot shows, read once per window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootSnapshot {
    /// When the snapshot was taken; relative times are measured from here.
    pub opened_at: Timestamp,
    /// Each home once, in [`Home::LOAD_ORDER`].
    pub homes: Vec<(Home, HomeShelf)>,
}

impl BootSnapshot {
    /// What the snapshot holds for `home`.
    pub fn home(&self, home: Home) -> Option<&HomeShelf> {
        self.homes
            .iter()
            .find(|(h, _)| *h == home)
            .map(|(_, shelf)| shelf)
    }

    /// The homes that could not be read, in load order.
    pub fn unavailable(&self) -> Vec<Home> {
        self.homes
            .iter()
            .filter(|(_, shelf)| *shelf == HomeShelf::Unavailable)
            .map(|(home, _)| *home)
            .collect()
    }
}
