//! Every host offers the shared notes and history tools with exactly core's
//! names, descriptions and schemas.

use std::sync::{Arc, Mutex};

use notesoup_core::tools::schemas;
use notesoup_pi::extension::{Notesoup, NotesoupConfig};
use notesoup_pi::host::{PiExtension, SessionStartReason};
use notesoup_pi::session::ToolDeclaration;
use notesoup_pi::testkit::{
    Clock, Harness, HostState, IdSource, ScriptedModel, SessionManager, Step,
};
use serde_json::{Value, json};

use crate::hosts::{Claude, PI_AGENT, World};

/// `(name, description, schema)` of core's shared tools, in core's order.
fn core_tools() -> Vec<(String, String, Value)> {
    schemas::all()
        .into_iter()
        .map(|tool| (tool.name.to_owned(), tool.description, tool.input_schema))
        .collect()
}

/// The host's tools that share a name with a core tool, in the host's
/// order; each core tool must be offered once.
fn check(host: &str, offered: Vec<(String, String, Value)>) {
    let core = core_tools();
    let mut shared: Vec<(String, String, Value)> = offered
        .into_iter()
        .filter(|(name, _, _)| core.iter().any(|(core_name, _, _)| core_name == name))
        .collect();
    shared.sort_by(|a, b| a.0.cmp(&b.0));
    let mut expected = core;
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        shared.len(),
        expected.len(),
        "{host} offers each shared tool once"
    );
    for (got, want) in shared.iter().zip(&expected) {
        assert_eq!(got, want, "{host}: {}", want.0);
    }
}

#[test]
fn claude_lists_cores_tools() {
    let world = World::new();
    let mut claude = Claude::new(&world);
    let list = claude.request("tools/list", json!({}));
    let offered = list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|tool| {
            (
                tool["name"].as_str().expect("name").to_owned(),
                tool["description"]
                    .as_str()
                    .expect("description")
                    .to_owned(),
                tool["inputSchema"].clone(),
            )
        })
        .collect();
    check("claude", offered);
}

#[test]
fn dsh_registers_cores_tools() {
    let offered = notesoup_dsh::tools::manifest()
        .into_iter()
        .map(|tool| (tool.name, tool.description, tool.parameters))
        .collect();
    check("dsh", offered);
}

#[test]
fn pi_registers_cores_tools_and_the_model_gets_them() {
    let world = World::new();
    let config = NotesoupConfig::from_env(world.env(Some(PI_AGENT))).expect("a notes root");
    let session = SessionManager::create(
        &world.pi_sessions,
        &world.project,
        "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a",
        Clock::System,
        IdSource::Random,
    );
    let host = HostState::new(session, None, &world.project);
    let extension = Notesoup::new(config, host.api_level).expect("Pi's API level is supported");
    let registered = extension
        .tools()
        .into_iter()
        .map(|tool| (tool.name, tool.description, tool.parameters))
        .collect();
    check("pi registration", registered);

    // What the model is actually offered in a request.
    let seen: Arc<Mutex<Vec<ToolDeclaration>>> = Arc::default();
    let mut model = ScriptedModel::new(200_000);
    let sink = Arc::clone(&seen);
    model.push_with(move |request| {
        sink.lock().unwrap().extend_from_slice(request.tools);
        Step::text("done")
    });
    let mut harness = Harness::new(host, extension, model);
    harness.start(SessionStartReason::Startup);
    harness.prompt("Which tools do you have?");
    let declared = seen
        .lock()
        .unwrap()
        .iter()
        .map(|tool| {
            (
                tool.name.clone(),
                tool.description.clone(),
                tool.parameters.clone(),
            )
        })
        .collect();
    check("pi model request", declared);
}
