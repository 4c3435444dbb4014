//! Every host offers exactly core's tool table: the same names, descriptions
//! and schemas, nothing left out and nothing of its own (Claude keeps no
//! budget, so it offers the table without the budget tools).

use std::sync::{Arc, Mutex};

use notesoup_core::tools::tools_for;
use notesoup_pi::extension::{Notesoup, NotesoupConfig};
use notesoup_pi::host::{PiExtension, SessionStartReason};
use notesoup_pi::session::ToolDeclaration;
use notesoup_pi_testkit::{
    Clock, Harness, HostState, IdSource, ScriptedModel, SessionManager, Step,
};
use serde_json::{Value, json};

use crate::hosts::{Claude, HostMachine, PI_AGENT};

/// `(name, description, schema)` of core's table for a host with or without
/// a budget, sorted by name.
fn core_tools(with_budget: bool) -> Vec<(String, String, Value)> {
    let mut tools: Vec<(String, String, Value)> = tools_for(with_budget)
        .map(|tool| {
            (
                tool.name.to_owned(),
                tool.description.clone(),
                tool.input_schema.clone(),
            )
        })
        .collect();
    tools.sort_by(|a, b| a.0.cmp(&b.0));
    tools
}

/// The host's complete tool list equals core's table.
fn check(host: &str, with_budget: bool, mut offered: Vec<(String, String, Value)>) {
    offered.sort_by(|a, b| a.0.cmp(&b.0));
    let expected = core_tools(with_budget);
    let names = |tools: &[(String, String, Value)]| -> Vec<String> {
        tools.iter().map(|(name, _, _)| name.clone()).collect()
    };
    assert_eq!(names(&offered), names(&expected), "{host}: the tool names");
    for (got, want) in offered.iter().zip(&expected) {
        assert_eq!(got, want, "{host}: {}", want.0);
    }
}

#[test]
fn claude_lists_cores_tools() {
    let world = HostMachine::new();
    let mut claude = Claude::new(&world);
    let list = claude.request("tools/list", json!({}));
    let offered: Vec<(String, String, Value)> = list["tools"]
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
    // Claude names its own skill where core's text names Pi's syntax; that
    // is the one difference allowed.
    let offered = offered
        .into_iter()
        .map(|(name, description, schema)| {
            (
                name,
                description.replace("the notesoup:memory skill", "/skill:memory"),
                schema,
            )
        })
        .collect();
    check("claude", false, offered);
}

#[test]
fn dsh_registers_cores_tools() {
    let offered = notesoup_dsh::tools::manifest()
        .into_iter()
        .map(|tool| (tool.name, tool.description, tool.parameters))
        .collect();
    check("dsh", true, offered);
}

#[test]
fn pi_registers_cores_tools_and_the_model_gets_them() {
    let world = HostMachine::new();
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
    check("pi registration", true, registered);

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
    check("pi model request", true, declared);
}
