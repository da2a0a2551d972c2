#include "engine/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/env.h"

namespace engine {

namespace {

const char kMagic[] = "TORCH_PJRT_EXE1\n";

bool make_dirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }

bool get_u64(const std::string& in, size_t& pos, uint64_t* v) {
  if (pos + 8 > in.size()) return false;
  std::memcpy(v, in.data() + pos, 8);
  pos += 8;
  return true;
}

}  // namespace

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string default_cache_dir() {
  if (const char* set = env::get("TORCH_PJRT_CACHE_DIR")) {
    std::string v(set);
    if (v == "0" || v == "off" || v == "none") return "";
    return v;
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/torch_pjrt";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/torch_pjrt";
  return "";
}

DiskCache::DiskCache(std::string dir, const std::string& identity) {
  if (dir.empty()) return;
  dir_ = dir + "/" + hex64(fnv1a(identity));
  if (!make_dirs(dir_)) {
    std::fprintf(stderr, "torch_pjrt: warning: cannot create cache dir %s; disk cache disabled\n", dir_.c_str());
    dir_.clear();
    return;
  }
  std::ofstream(dir_ + "/IDENTITY") << identity << "\n";
}

std::string DiskCache::path_for(const std::string& key) const {
  return dir_ + "/" + hex64(fnv1a(key)) + hex64(fnv1a(key, 0x9e3779b97f4a7c15ull)) + ".exe";
}

std::optional<std::string> DiskCache::load(const std::string& key) {
  if (!enabled()) return std::nullopt;
  std::string path = path_for(key);
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t pos = sizeof(kMagic) - 1;
  uint64_t klen = 0, plen = 0, sum = 0;
  bool ok = data.compare(0, pos, kMagic) == 0 && get_u64(data, pos, &klen) && pos + klen <= data.size() &&
            data.compare(pos, klen, key) == 0;
  if (ok) {
    pos += klen;
    ok = get_u64(data, pos, &plen) && pos + plen + 8 == data.size();
  }
  std::string payload;
  if (ok) {
    payload = data.substr(pos, plen);
    pos += plen;
    ok = get_u64(data, pos, &sum) && sum == fnv1a(payload);
  }
  if (!ok) {
    ++corrupt_;
    std::fprintf(stderr, "torch_pjrt: warning: discarding corrupt compilation cache entry %s\n", path.c_str());
    std::remove(path.c_str());
    return std::nullopt;
  }
  return payload;
}

void DiskCache::store(const std::string& key, const std::string& payload) {
  if (!enabled()) return;
  std::string data(kMagic);
  put_u64(data, key.size());
  data += key;
  put_u64(data, payload.size());
  data += payload;
  put_u64(data, fnv1a(payload));
  std::string path = path_for(key);
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = write(fd, data.data() + off, data.size() - off);
    if (n <= 0) break;
    off += static_cast<size_t>(n);
  }
  bool complete = off == data.size();
  close(fd);
  // rename() is atomic: readers see either no entry or a whole one, also
  // when several processes store the same key at once.
  if (!complete || std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace engine
