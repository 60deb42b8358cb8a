// Unit tests for the trainer's distributed numerics (fixtures/cpp/dist.h):
// our SyncBatchNorm over N ranks equals torch::nn::BatchNorm1d (training
// mode) over the concatenated global batch, in outputs, input gradients,
// parameter gradients (summed over ranks, as DDP's all-reduce combines
// them) and running statistics; bucketed gradient all-reduce averages.
// N ranks are N threads, each with its own ProcessGroupGloo on loopback over
// one shared c10d::HashStore.
#ifdef AFTERMATH_HAVE_TRAINER

#include <gtest/gtest.h>

#include <exception>
#include <mutex>
#include <thread>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "fixtures/cpp/dist.h"

namespace trainer {
namespace {

constexpr double kTol = 1e-5;

double max_abs(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.numel() == 0 && b.numel() == 0) return 0;
  return (a.to(torch::kDouble) - b.to(torch::kDouble)).abs().max().item<double>();
}

// These tests run over gloo; a build without it (fixtures/cpp/CMakeLists.txt)
// skips them.
#define SKIP_WITHOUT_GLOO() \
  if (!gloo_built()) GTEST_SKIP() << "built without gloo"

// Runs fn(rank, comm) on `world` threads, each with its own gloo group.
// Rethrows the first failure.
void on_ranks(int world, const std::function<void(int, Comm&)>& fn) {
  auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::thread> threads;
  std::exception_ptr failure;
  std::mutex mu;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      try {
        auto group = make_gloo_group(store, r, world, std::chrono::seconds(30), "127.0.0.1");
        Comm comm(group, r, world);
        fn(r, comm);
      } catch (...) {
        std::lock_guard<std::mutex> l(mu);
        if (!failure) failure = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
}

struct Reference {
  torch::Tensor y, dx, dw, db, running_mean, running_var;
};

// BatchNorm1d over the whole batch, loss = sum(y * g).
Reference reference(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                    const torch::Tensor& g) {
  torch::nn::BatchNorm1d bn(torch::nn::BatchNorm1dOptions(x.size(1)).eps(1e-5).momentum(0.1));
  bn->train();
  {
    torch::NoGradGuard ng;
    bn->weight.copy_(w);
    bn->bias.copy_(b);
  }
  torch::Tensor xg = x.clone().requires_grad_();
  torch::Tensor y = bn(xg);
  (y * g).sum().backward();
  return {y.detach(),
          xg.grad(),
          bn->weight.grad(),
          bn->bias.grad(),
          bn->running_mean.clone(),
          bn->running_var.clone()};
}

// Splits rows [0, N) into consecutive pieces of the given sizes.
std::vector<std::pair<std::int64_t, std::int64_t>> pieces(const std::vector<std::int64_t>& sizes) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::int64_t at = 0;
  for (auto s : sizes) {
    out.emplace_back(at, at + s);
    at += s;
  }
  return out;
}

void check_against_batchnorm(const std::vector<std::int64_t>& rows_per_rank,
                             std::int64_t channels) {
  const int world = static_cast<int>(rows_per_rank.size());
  std::int64_t n = 0;
  for (auto r : rows_per_rank) n += r;
  torch::manual_seed(17);
  torch::Tensor x = torch::randn({n, channels}) * 3 + 1.5;  // a mean and a scale to normalise away
  torch::Tensor w = torch::rand({channels}) + 0.5;
  torch::Tensor b = torch::randn({channels});
  torch::Tensor g = torch::randn({n, channels});
  Reference ref = reference(x, w, b, g);
  auto parts = pieces(rows_per_rank);

  std::vector<torch::Tensor> ys(world), dxs(world), dws(world), dbs(world), rms(world), rvs(world);
  on_ranks(world, [&](int r, Comm& comm) {
    auto [lo, hi] = parts[static_cast<size_t>(r)];
    torch::Tensor xr = x.slice(0, lo, hi).clone().requires_grad_();
    torch::Tensor wr = w.clone().requires_grad_();
    torch::Tensor br = b.clone().requires_grad_();
    torch::Tensor rm = torch::zeros({channels}), rv = torch::ones({channels});
    torch::Tensor y = sync_batch_norm(xr, wr, br, rm, rv, 0.1, 1e-5, &comm);
    (y * g.slice(0, lo, hi)).sum().backward();
    ys[r] = y.detach();
    dxs[r] = xr.grad().defined() ? xr.grad() : torch::zeros_like(xr);
    dws[r] = wr.grad();
    dbs[r] = br.grad();
    rms[r] = rm;
    rvs[r] = rv;
    EXPECT_EQ(comm.count(), 2);  // one all-reduce forward, one backward
  });
  torch::Tensor dw = torch::zeros({channels}), db = torch::zeros({channels});
  for (int r = 0; r < world; ++r) {
    auto [lo, hi] = parts[static_cast<size_t>(r)];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_LE(max_abs(ys[r], ref.y.slice(0, lo, hi)), kTol);
    EXPECT_LE(max_abs(dxs[r], ref.dx.slice(0, lo, hi)), kTol);
    EXPECT_LE(max_abs(rms[r], ref.running_mean), kTol);
    EXPECT_LE(max_abs(rvs[r], ref.running_var), kTol);
    dw += dws[r];
    db += dbs[r];
  }
  // Parameter gradients are local; their sum is the global gradient.
  EXPECT_LE(max_abs(dw, ref.dw), 1e-4);
  EXPECT_LE(max_abs(db, ref.db), 1e-4);
}

TEST(TrainerSyncBN, TwoRanksEqualBatchNormOverTheGlobalBatch) {
  SKIP_WITHOUT_GLOO();
  check_against_batchnorm({6, 10}, 5);
}

TEST(TrainerSyncBN, ThreeRanksUnevenBatches) {
  SKIP_WITHOUT_GLOO();
  check_against_batchnorm({7, 1, 12}, 4);
}

TEST(TrainerSyncBN, AnEmptyRankShadowsTheCollectives) {
  SKIP_WITHOUT_GLOO();
  // The Join case: a rank out of data takes part with zero rows.
  check_against_batchnorm({9, 0}, 3);
}

TEST(TrainerSyncBN, GradientBucketsAverageAcrossRanks) {
  SKIP_WITHOUT_GLOO();
  on_ranks(2, [](int r, Comm& comm) {
    torch::Tensor a = torch::zeros({3}, torch::requires_grad());
    torch::Tensor b = torch::zeros({2, 2}, torch::requires_grad());
    a.mutable_grad() = torch::full({3}, static_cast<float>(r + 1));      // 1, 2
    b.mutable_grad() = torch::full({2, 2}, static_cast<float>(10 * r));  // 0, 10
    GradReducer reducer({a, b}, /*bucket_bytes=*/12, &comm);             // one bucket each
    EXPECT_EQ(reducer.buckets(), 2u);
    reducer.reduce();
    EXPECT_LE(max_abs(a.grad(), torch::full({3}, 1.5f)), 1e-6);
    EXPECT_LE(max_abs(b.grad(), torch::full({2, 2}, 5.0f)), 1e-6);
    EXPECT_EQ(comm.count(), 2);
  });
}

TEST(TrainerSyncBN, BroadcastStateCopiesRankZero) {
  SKIP_WITHOUT_GLOO();
  on_ranks(2, [](int r, Comm& comm) {
    torch::Tensor p = torch::full({4}, static_cast<float>(r + 7));
    torch::Tensor q = torch::full({2}, static_cast<float>(-r));
    broadcast_state({p, q}, comm);
    EXPECT_LE(max_abs(p, torch::full({4}, 7.0f)), 0);
    EXPECT_LE(max_abs(q, torch::zeros({2})), 0);
  });
}

}  // namespace
}  // namespace trainer

#endif  // AFTERMATH_HAVE_TRAINER
