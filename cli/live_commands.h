// `relaysim serve`, `relaysim world` and `relaysim judge`: the live shell's commands, for the webhook
// platform and (serve, keys and world so far) the SMS gateway. cli/main.cpp parses their arguments;
// these turn them into a running service, world or judgement (live/webhook/ has the parts).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace relaysim::live {

struct ServeArgs {
  std::string config;
  std::optional<std::string> listen;    // over the file's serve.listen
  std::optional<std::string> database;  // over the file's serve.database
  std::optional<std::uint32_t> pod;     // over the file's serve.pod
  std::string events;                   // log the model's events here (for `relaysim judge`)
  std::optional<std::uint32_t> crash_after_commit;  // the outbox relay: die unlogged after this many changes
  bool check = false;                   // read and check the file, then exit
  bool reference = false;               // print the format's reference as Markdown
};

// `relaysim keys CONFIG`: the API keys in the database CONFIG names. One action: make an admin
// key, make a tenant's key, revoke a key, or (the default) list them.
struct KeysArgs {
  std::string config;
  std::optional<std::string> database;  // over the file's serve.database
  bool admin = false;
  std::optional<std::string> tenant;
  std::optional<std::uint64_t> revoke;
  bool list = false;
};

struct WorldArgs {
  std::string scenario;
  std::optional<std::string> listen;  // default 127.0.0.1:8081; an SMS world's 127.0.0.1:8091
  std::string serve;                  // an SMS world: the gateway's serve configuration
  std::string gateway;                // an SMS world: where receipts go, over the file's serve.listen
  std::string receipts;
  std::string signing_secret;
  std::optional<std::string> hold;
  std::vector<std::string> drive;  // serve's base URLs: send the scenario's load there
  std::string calls;               // where the driven calls are written
  std::string effects;             // an outbox world: the downstream's database
};

struct JudgeArgs {
  std::string scenario;
  std::string config;
  std::vector<std::string> events;
  std::string receipts;
  std::string calls;
  std::string database;
  std::string json;  // also write the verdict and the run's figures to this file
};

int serve_command(const ServeArgs& args);
int keys_command(const KeysArgs& args);
int world_command(const WorldArgs& args);
int judge_command(const JudgeArgs& args);

}  // namespace relaysim::live
