// tools/bench_bare_cartpole: the reference figure for `rltrain bench --env cartpole`, a bare
// CartPole step loop on one core: structure-of-arrays state, the same equations and constants as
// envs/cartpole.h, libm's sinf/cosf, the observation written (num_envs x 4) as VecEnv writes it,
// a terminated env put back near upright. No VecEnv, no counters, no episode statistics, no final
// observation, no random numbers (actions are a fixed pattern). What `rltrain bench` measures beyond
// this loop is the price of the env contract and of the random actions it draws.
//   bench_bare_cartpole [num_envs=4096] [steps=20000]
// Prints env steps per CPU second (the process's CPU time, so a busy machine does not count).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <time.h>

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Soa {
  std::vector<float> x, x_dot, theta, theta_dot;
  explicit Soa(long n) : x(n, 0.01f), x_dot(n, -0.02f), theta(n, 0.03f), theta_dot(n, 0.0f) {}
};

// One step of every env (CartPole-v1's equations, float, explicit Euler).
__attribute__((noinline)) void step_all(Soa& s, const float* action, float* obs, unsigned char* done, long n) {
  const float gravity = 9.8f, mass_cart = 1.0f, mass_pole = 0.1f, half_length = 0.5f, force_mag = 10.0f, tau = 0.02f;
  const float theta_threshold = 12.0f * 2.0f * 3.14159265358979323846f / 360.0f, x_threshold = 2.4f;
  const float total_mass = mass_cart + mass_pole, polemass_length = mass_pole * half_length;
  for (long i = 0; i < n; ++i) {
    const float force = action[i] >= 0.5f ? force_mag : -force_mag;
    const float th = s.theta[i], thd = s.theta_dot[i];
    const float c = cosf(th), sn = sinf(th);
    const float temp = (force + polemass_length * thd * thd * sn) / total_mass;
    const float theta_acc = (gravity * sn - c * temp) / (half_length * (4.0f / 3.0f - mass_pole * c * c / total_mass));
    const float x_acc = temp - polemass_length * theta_acc * c / total_mass;
    float x = s.x[i] + tau * s.x_dot[i];
    float x_dot = s.x_dot[i] + tau * x_acc;
    float theta = th + tau * thd;
    float theta_dot = thd + tau * theta_acc;
    const bool term = x < -x_threshold || x > x_threshold || theta < -theta_threshold || theta > theta_threshold;
    if (term) x = 0.01f, x_dot = -0.02f, theta = 0.03f, theta_dot = 0.0f;
    s.x[i] = x, s.x_dot[i] = x_dot, s.theta[i] = theta, s.theta_dot[i] = theta_dot;
    obs[4 * i + 0] = x, obs[4 * i + 1] = x_dot, obs[4 * i + 2] = theta, obs[4 * i + 3] = theta_dot;
    done[i] = term;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 4096;
  const long steps = argc > 2 ? std::atol(argv[2]) : 20000;
  if (n <= 0 || steps <= 0) {
    std::fprintf(stderr, "usage: bench_bare_cartpole [num_envs > 0] [steps > 0]\n");
    return 2;
  }
  Soa s(n);
  std::vector<float> obs(4 * n), action(n);
  std::vector<unsigned char> done(n);
  for (long i = 0; i < n; ++i) action[i] = static_cast<float>((i * 7 + i / 3) % 2);
  long episodes = 0;
  for (int w = 0; w < 10; ++w) step_all(s, action.data(), obs.data(), done.data(), n);
  const double t0 = cpu_seconds();
  for (long t = 0; t < steps; ++t) {
    step_all(s, action.data(), obs.data(), done.data(), n);
    episodes += done[t % n];
  }
  const double cpu = cpu_seconds() - t0;
  std::printf("bare CartPole loop: %ld envs x %ld steps: %.4g env steps per CPU second (%ld episodes seen)\n", n, steps,
              static_cast<double>(n) * steps / cpu, episodes);
  return 0;
}
