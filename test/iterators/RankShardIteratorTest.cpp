#include <doctest/doctest.h>

#include "iterators/RankShardIterator.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using testutil::VectorIterator;

namespace {
// The first feature of every batch the shard returns: batch b's data starts with a value unique
// to b.
std::vector<float> firstValues(DataSetIterator& it) {
  std::vector<float> out;
  while (it.hasNext()) out.push_back(it.next().features.data()[0]);
  return out;
}
}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("RankShardIterator: the ranks read every batch of an epoch exactly once, i mod size") {
    const auto data = testutil::batches(7, 4);
    for (int size : {1, 2, 3}) {
      std::vector<float> seen;
      for (int rank = 0; rank < size; ++rank) {
        VectorIterator all(data);
        RankShardIterator shard(all, rank, size);
        const auto mine = firstValues(shard);
        CHECK(mine.size() == static_cast<size_t>((7 - rank + size - 1) / size));  // uneven by <= 1
        for (size_t j = 0; j < mine.size(); ++j)
          CHECK(mine[j] ==
                data[static_cast<size_t>(rank) + j * static_cast<size_t>(size)].features.data()[0]);
        CHECK(all.served() == static_cast<int64_t>(mine.size()));  // the others' were skipped
        seen.insert(seen.end(), mine.begin(), mine.end());
      }
      CHECK(seen.size() == data.size());
    }
  }

  TEST_CASE(
      "RankShardIterator: reset starts the shard again, and a resumed source counts from where it "
      "stands") {
    const auto data = testutil::batches(5, 2);
    VectorIterator all(data);
    RankShardIterator shard(all, 1, 2);
    CHECK(firstValues(shard).size() == 2);
    shard.reset();
    CHECK(firstValues(shard) ==
          std::vector<float>{data[1].features.data()[0], data[3].features.data()[0]});
    all.reset();
    all.skipNext();  // batch 0 was trained before: batch 1 is the shard's batch 0
    RankShardIterator resumed(all, 1, 2);
    CHECK(firstValues(resumed) ==
          std::vector<float>{data[2].features.data()[0], data[4].features.data()[0]});
    CHECK_THROWS_AS(resumed.next(), DataError);
    CHECK_THROWS_AS(resumed.skipNext(), DataError);
  }

  TEST_CASE("RankShardIterator: a rank outside 0..size-1 is a ConfigError") {
    VectorIterator all(testutil::batches(2, 2));
    CHECK_THROWS_AS(RankShardIterator(all, 2, 2), ConfigError);
    CHECK_THROWS_AS(RankShardIterator(all, -1, 2), ConfigError);
    CHECK_THROWS_AS(RankShardIterator(all, 0, 0), ConfigError);
  }
}
