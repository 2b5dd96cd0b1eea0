// Test helpers around weft's simulated verbs provider (libweft_sim_verbs.so):
// configuring its world through WEFT_SIM_VERBS_* variables, choosing the
// rank a VerbsFabric opens as, inspecting live objects, the world's virtual
// time and trace hash, and a clock that reads that virtual time.
#ifndef WEFT_TESTS_VERBS_SIM_PROVIDER_H_
#define WEFT_TESTS_VERBS_SIM_PROVIDER_H_

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fabric/clock.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "gtest/gtest.h"
#include "verbs/verbs_fabric.h"

namespace weft::verbs::testing {

// Every variable the provider reads; configure() clears the ones not given.
inline const char* const kProviderVariables[] = {
    "WEFT_SIM_VERBS_RANKS",        "WEFT_SIM_VERBS_CABLES",
    "WEFT_SIM_VERBS_TOPOLOGY",     "WEFT_SIM_VERBS_RANK",
    "WEFT_SIM_VERBS_SEED",         "WEFT_SIM_VERBS_LINK",
    "WEFT_SIM_VERBS_FAULTS",       "WEFT_SIM_VERBS_FAULTS_FILE",
    "WEFT_SIM_VERBS_POLL_STEP_NS", "WEFT_SIM_VERBS_GID_MODE",
    "WEFT_SIM_VERBS_PORT",         "WEFT_SIM_VERBS_APPLE_LIMITS",
    "WEFT_SIM_VERBS_QUEUE_DEPTH",
};

// The provider's control calls (sim_verbs/sim_verbs.h), found with
// dlsym in the same library instance the loader opens.
class SimProvider {
 public:
  static const char* path() { return WEFT_SIM_VERBS_PATH; }

  SimProvider() {
    handle_ = dlopen(path(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_NE(handle_, nullptr) << dlerror();
    reset_ = symbol<int (*)()>("weft_sim_verbs_reset");
    set_rank_ = symbol<int (*)(uint32_t)>("weft_sim_verbs_set_rank");
    live_ = symbol<int (*)(const char*, uint32_t, const char*)>(
        "weft_sim_verbs_live");
    sgid_ = symbol<int (*)(uint32_t)>("weft_sim_verbs_qp_sgid_index");
    last_error_ = symbol<const char* (*)()>("weft_sim_verbs_last_error");
    now_ns_ = symbol<int64_t (*)()>("weft_sim_verbs_now_ns");
    trace_hash_ = symbol<uint64_t (*)()>("weft_sim_verbs_trace_hash");
    crashed_ = symbol<int (*)(uint32_t)>("weft_sim_verbs_crashed");
  }
  ~SimProvider() {
    if (handle_ != nullptr) dlclose(handle_);
  }

  // Sets exactly `variables` among the provider's and rebuilds its world.
  void configure(const std::map<std::string, std::string>& variables) {
    for (const char* name : kProviderVariables) unsetenv(name);
    for (const auto& [name, value] : variables) {
      setenv(name.c_str(), value.c_str(), 1);
    }
    ASSERT_EQ(reset_(), 0) << "objects of an earlier test are still alive";
  }
  int set_rank(uint32_t rank) { return set_rank_(rank); }
  int live(const char* kind, uint32_t rank, const char* device = nullptr) {
    return live_(kind, rank, device);
  }
  int sgid_index(uint32_t qp_num) { return sgid_(qp_num); }
  std::string last_error() { return last_error_(); }
  TimeNs now_ns() const { return now_ns_(); }
  uint64_t trace_hash() const { return trace_hash_(); }
  bool crashed(uint32_t rank) const { return crashed_(rank) == 1; }

  // VerbsFabric options that load this provider.
  static VerbsFabric::Options options() {
    VerbsFabric::Options o;
    o.library = path();
    return o;
  }
  // The fabric of `rank` (its devices are the ones the provider lists).
  std::unique_ptr<VerbsFabric> open_rank(uint32_t rank) {
    EXPECT_EQ(set_rank(rank), 0);
    auto fabric = VerbsFabric::open(rank, options());
    EXPECT_TRUE(fabric.ok()) << fabric.status();
    return fabric.ok() ? *std::move(fabric) : nullptr;
  }

 private:
  template <typename Fn>
  Fn symbol(const char* name) {
    void* p = handle_ == nullptr ? nullptr : dlsym(handle_, name);
    EXPECT_NE(p, nullptr) << name;
    return reinterpret_cast<Fn>(p);
  }

  void* handle_ = nullptr;
  int (*reset_)() = nullptr;
  int (*set_rank_)(uint32_t) = nullptr;
  int (*live_)(const char*, uint32_t, const char*) = nullptr;
  int (*sgid_)(uint32_t) = nullptr;
  const char* (*last_error_)() = nullptr;
  int64_t (*now_ns_)() = nullptr;
  uint64_t (*trace_hash_)() = nullptr;
  int (*crashed_)(uint32_t) = nullptr;
};

// The provider world's virtual time, for VerbsFabric::Options::clock: the
// collectives' deadlines then fire at the same point of every rerun.
// Valid for one world (weft_sim_verbs_reset starts time again at 0).
class ProviderClock final : public Clock {
 public:
  explicit ProviderClock(const SimProvider& provider) : provider_(provider) {}
  TimeNs now_ns() const override { return provider_.now_ns(); }

 private:
  const SimProvider& provider_;
};

// Polls every endpoint in turn until `done()` or `max_rounds` rounds (the
// deadline: the provider's world moves a fixed step per poll). Completions
// go to `sink(index of endpoint, completion)`.
template <typename Done, typename Sink>
bool poll_until(std::span<Endpoint* const> endpoints, Done done, Sink sink,
                int max_rounds = 10'000) {
  std::vector<Completion> batch(Endpoint::kMaxPollBatch);
  for (int round = 0; round < max_rounds && !done(); ++round) {
    for (size_t i = 0; i < endpoints.size(); ++i) {
      auto n = endpoints[i]->poll(batch);
      EXPECT_TRUE(n.ok()) << n.status();
      if (!n.ok()) return false;
      for (size_t k = 0; k < *n; ++k) sink(i, batch[k]);
    }
  }
  return done();
}

}  // namespace weft::verbs::testing

#endif  // WEFT_TESTS_VERBS_SIM_PROVIDER_H_
