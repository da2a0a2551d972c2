// The persistent compilation cache: serialized executables on disk, keyed
// by the op-graph key and the plugin's identity, so a second run of the
// same program compiles nothing. Entries are written to a temporary file
// and renamed into place (atomic), and carry their full key and a checksum:
// a torn, corrupt or colliding entry is detected, discarded and recompiled.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace engine {

class DiskCache {
 public:
  // dir empty: disabled. identity: platform, plugin and compiler versions.
  DiskCache(std::string dir, const std::string& identity);
  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }
  // The payload stored for key, if a valid entry exists.
  std::optional<std::string> load(const std::string& key);
  void store(const std::string& key, const std::string& payload);
  int64_t corrupt_entries() const { return corrupt_; }

 private:
  std::string path_for(const std::string& key) const;
  std::string dir_;
  int64_t corrupt_ = 0;
};

uint64_t fnv1a(const std::string& s, uint64_t seed = 1469598103934665603ull);
// $TORCH_PJRT_CACHE_DIR, else $XDG_CACHE_HOME/torch_pjrt, else ~/.cache/torch_pjrt;
// "0" or "off" disables.
std::string default_cache_dir();

}  // namespace engine
