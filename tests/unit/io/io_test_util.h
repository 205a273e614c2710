// Helpers shared by the io tests: a valid base scenario to mutate, and content equality of
// scenarios through the writer (which writes every field).
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "ordo/core/scenario.h"
#include "ordo/io/scenario_io.h"

namespace ordo::io::testing {

/// A valid scenario touching every feature: two node groups, a single-shape job, a job with two
/// shapes, a running job, a service with every optional field.
inline nlohmann::json BaseScenarioJson() {
  return nlohmann::json::parse(R"({
    "version": 1,
    "name": "base",
    "description": "every feature once",
    "step_minutes": 60,
    "horizon_steps": 4,
    "cluster": {"node_groups": [
      {"name": "h100", "nodes": 2, "gpus_per_node": 8, "gpu_type": "H100", "gpu_memory_gb": 80},
      {"name": "a10", "nodes": 1, "gpus_per_node": 4, "gpu_type": "A10", "gpu_memory_gb": 24}
    ]},
    "objective": {"time_decay": 0.25, "unmet_penalty_multiplier": 6},
    "jobs": [
      {"id": "train-a", "kind": "training", "priority": 5, "arrival_step": 0,
       "gpus": 4, "duration_steps": 6},
      {"id": "quant-b", "kind": "quantization", "priority": 2.5, "arrival_step": 3,
       "shapes": [{"gpus": 1, "duration_steps": 4}, {"gpus": 2, "duration_steps": 2}],
       "gpu_type": "A10", "min_gpu_memory_gb": 16},
      {"id": "train-c", "kind": "training", "priority": 8, "arrival_step": -5,
       "gpus": 8, "duration_steps": 10, "running": {"start_step": -5, "first_gpu": 0},
       "features": {"params_b": 7, "method": "lora"}}
    ],
    "services": [
      {"id": "chat", "priority": 10, "min_gpus": 1, "max_gpus": 8, "max_change_per_step": 2,
       "current_gpus": 2, "gpu_type": "H100", "demand": [2, 3, 4, 2]}
    ]
  })");
}

/// The same scenario as block YAML, written the way a person would.
inline std::string BaseScenarioYaml() {
  return R"(# the base scenario, in YAML
version: 1
name: base
description: "every feature once"
step_minutes: 60
horizon_steps: 4
cluster:
  node_groups:
    - name: h100
      nodes: 2
      gpus_per_node: 8
      gpu_type: H100
      gpu_memory_gb: 80
    - {name: a10, nodes: 1, gpus_per_node: 4, gpu_type: A10, gpu_memory_gb: 24}
objective:
  time_decay: 0.25
  unmet_penalty_multiplier: 6
jobs:
  - id: train-a
    kind: training
    priority: 5
    arrival_step: 0
    gpus: 4
    duration_steps: 6
  - id: quant-b
    kind: quantization
    priority: 2.5
    arrival_step: 3
    shapes:
      - gpus: 1
        duration_steps: 4
      - {gpus: 2, duration_steps: 2}
    gpu_type: A10
    min_gpu_memory_gb: 16
  - id: train-c
    kind: training
    priority: 8
    arrival_step: -5
    gpus: 8
    duration_steps: 10
    running: {start_step: -5, first_gpu: 0}
    features:
      params_b: 7
      method: lora
services:
  - id: chat
    priority: 10
    min_gpus: 1
    max_gpus: 8
    max_change_per_step: 2
    current_gpus: 2
    gpu_type: H100
    demand: [2, 3, 4, 2]
)";
}

/// The scenario's content as compact text: the writer writes every field, so equal text means
/// equal content.
inline std::string Content(const Scenario& scenario) { return WriteScenario(scenario, -1); }

}  // namespace ordo::io::testing
