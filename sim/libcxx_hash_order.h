#pragma once
// The iteration order of libc++'s std::unordered_map, for the MJCF compiler's ports of MuJoCo code
// that walks such a map (host only).
//
// MuJoCo's Linux wheels (3.17: clang 20, libc++ linked statically into libmujoco.so, its symbols
// in namespace std::__1) list a mesh's polygons in the iteration order of an
// std::unordered_map<std::pair<double, double>, MeshPolygon, PairHash> (user_mesh.cc MakePolygons).
// We build with libstdc++, whose unordered_map hashes doubles and orders its nodes otherwise, so the
// same map here would list the same polygons in another order. The order of libc++'s map depends
// only on the keys' hashes and the insertion sequence (no key is erased), so this class replays
// libc++'s __hash_table for unique keys on the hashes alone: a singly linked list of nodes and, per
// bucket, the node before the bucket's first; a node whose bucket is empty goes to the front of the
// list, one whose bucket is not goes first in that bucket's run; the table grows before an insert
// that would pass load factor 1, to max(2 bc + 1, size + 1) buckets rounded up to a prime (2 for the
// first insert), and the rehash walks the list keeping runs of one bucket together (libc++'s
// __emplace_unique_key_args, __rehash and __do_rehash; the hash of a double, libcxx_hash, is its bit
// pattern, 0 for either zero). Checked against libc++ 14's unordered_map on random keys and against
// the wheel's mesh_poly* on Menagerie's meshes (tests/sim/test_mjcf_mesh.cpp, tools/mesh_polygons_peer.py).

#include <cstdint>
#include <cstring>
#include <vector>

namespace rlt::mjcf_detail {

static_assert(sizeof(size_t) == 8, "libc++'s hash of a double is its bit pattern only where size_t has 64 bits");

// libc++'s std::hash<double> on a 64-bit target.
inline size_t libcxx_hash(double v) {
  if (v == 0.0) return 0;  // -0.0 and 0.0 hash alike
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return static_cast<size_t>(bits);
}

class LibcxxHashOrder {
 public:
  // A new key's hash (the caller has made sure the key is not in the map yet); its node's id is the
  // number of keys inserted before it.
  void insert(size_t hash) {
    const int node = static_cast<int>(m_hash.size());
    if (m_hash.size() + 1 > m_bucket.size() || m_bucket.empty()) {  // max_load_factor 1
      const size_t bc = m_bucket.size();
      const bool pow2 = bc > 2 && (bc & (bc - 1)) == 0;  // libc++'s __is_hash_power2
      size_t n = 2 * bc + (pow2 ? 0 : 1);
      if (n < m_hash.size() + 1) n = m_hash.size() + 1;
      rehash(n);
    }
    m_hash.push_back(hash);
    m_next.push_back(kEnd);
    const size_t b = constrain(hash, m_bucket.size());
    const int before = m_bucket[b];
    if (before == kNone) {  // an empty bucket: the node goes to the front of the list
      m_next[node] = m_first;
      m_first = node;
      m_bucket[b] = kHead;
      if (m_next[node] != kEnd) m_bucket[constrain(m_hash[m_next[node]], m_bucket.size())] = node;
    } else {  // first in its bucket's run
      m_next[node] = next_of(before);
      set_next(before, node);
    }
  }

  // The nodes (insertion indices) in the map's iteration order.
  std::vector<int> order() const {
    std::vector<int> out;
    out.reserve(m_hash.size());
    for (int p = m_first; p != kEnd; p = m_next[p]) out.push_back(p);
    return out;
  }

  size_t bucket_count() const { return m_bucket.size(); }

 private:
  static constexpr int kHead = -1;  // "before" the list's first node: libc++'s __p1_ anchor
  static constexpr int kNone = -2;  // an empty bucket
  static constexpr int kEnd = -3;   // the end of the list

  static size_t constrain(size_t h, size_t bc) {  // libc++'s __constrain_hash
    return (bc & (bc - 1)) == 0 ? h & (bc - 1) : (h < bc ? h : h % bc);
  }
  static size_t next_prime(size_t n) {  // the smallest prime >= n (n >= 2), libc++'s __next_prime
    for (;; ++n) {
      bool prime = n >= 2;
      for (size_t d = 2; prime && d * d <= n; ++d) prime = n % d != 0;
      if (prime) return n;
    }
  }
  int next_of(int p) const { return p == kHead ? m_first : m_next[p]; }
  void set_next(int p, int v) { (p == kHead ? m_first : m_next[p]) = v; }

  void rehash(size_t n) {  // libc++'s __rehash (growth only: a map that is never erased from)
    if (n == 1) {
      n = 2;
    } else if (n & (n - 1)) {
      n = next_prime(n);
    }
    if (n <= m_bucket.size()) return;
    m_bucket.assign(n, kNone);  // __do_rehash
    int pp = kHead, cp = m_first;
    if (cp == kEnd) return;
    size_t phash = constrain(m_hash[cp], n);
    m_bucket[phash] = pp;
    pp = cp;
    for (cp = m_next[cp]; cp != kEnd; cp = next_of(pp)) {
      const size_t chash = constrain(m_hash[cp], n);
      if (chash == phash) {
        pp = cp;
      } else if (m_bucket[chash] == kNone) {
        m_bucket[chash] = pp;
        pp = cp;
        phash = chash;
      } else {  // move cp to the front of its bucket's run
        set_next(pp, m_next[cp]);
        m_next[cp] = next_of(m_bucket[chash]);
        set_next(m_bucket[chash], cp);
      }
    }
  }

  std::vector<size_t> m_hash;  // (nkey) each node's hash
  std::vector<int> m_next;     // (nkey) the node after it in the list, kEnd at the end
  int m_first = kEnd;          // the list's first node
  std::vector<int> m_bucket;   // (bucket count) the node before the bucket's first, kHead, or kNone
};

}  // namespace rlt::mjcf_detail
