"""PPO in one file, CleanRL-style (ppo.py / ppo_continuous_action.py), training rltrain's envs through
rltrain.make_vec: the envs step in C++, the learner is plain torch.

    python examples/ppo_torch.py --env cartpole --target 475     # discrete: stops at mean return 475
    python examples/ppo_torch.py --env ant --total-steps 5000000  # continuous

Needs torch (pip install torch); rltrain and gymnasium as for make_vec. Observations come in as
torch tensors through DLPack without a copy (the views are valid until the next step, so the rollout
stores copies). Same-step autoreset: a truncated episode's value is bootstrapped from
info["final_obs_batch"] (rltrain's (num_envs, obs_dim) view of the final observations; Gymnasium's
object array info["final_obs"] holds the same rows). Settings per env mirror configs/<env>.toml.
"""
import argparse
import sys
import time

try:
    import torch
    import torch.nn as nn
    from torch.distributions import Categorical, Normal
except ImportError:
    sys.exit("examples/ppo_torch.py: torch is not installed (pip install torch); nothing was trained")
import numpy as np

import rltrain

# (num_envs, num_steps, epochs, minibatches, lr, hidden, init_log_std, normalize obs and reward, total steps)
PRESETS = {
    "cartpole": dict(num_envs=16, num_steps=32, epochs=4, minibatches=4, lr=3e-3, hidden=16, init_log_std=0.0,
                     normalize=False, total_steps=300_000),
    "ant": dict(num_envs=128, num_steps=32, epochs=5, minibatches=8, lr=5e-4, hidden=64, init_log_std=-0.5,
                normalize=True, total_steps=10_000_000),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="cartpole")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--total-steps", type=int, default=None)
    p.add_argument("--target", type=float, default=None, help="stop once the mean return of 100 episodes reaches it")
    p.add_argument("--threads", type=int, default=1, help="rltrain's CPU threads for the envs")
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip-coef", type=float, default=0.2)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--max-grad-norm", type=float, default=0.5)
    args = p.parse_args()
    for k, v in PRESETS.get(args.env, PRESETS["ant"]).items():
        if getattr(args, k, None) is None:
            setattr(args, k, v)
    return args


class RunningMeanStd:
    """Running mean and variance (Chan's parallel update), as Gymnasium's normalization wrappers keep."""

    def __init__(self, shape):
        self.mean, self.var, self.count = torch.zeros(shape), torch.ones(shape), 1e-4

    def update(self, x):
        mean, var, n = x.mean(0), x.var(0, unbiased=False), x.shape[0]
        delta, total = mean - self.mean, self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + var * n + delta**2 * self.count * n / total) / total
        self.count = total


def layer(i, o, std=np.sqrt(2)):
    lin = nn.Linear(i, o)
    nn.init.orthogonal_(lin.weight, std)
    nn.init.constant_(lin.bias, 0.0)
    return lin


class Agent(nn.Module):
    def __init__(self, obs_dim, act_dim, discrete, hidden, init_log_std):
        super().__init__()
        self.discrete = discrete
        self.critic = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                    layer(hidden, 1, 1.0))
        self.actor = nn.Sequential(layer(obs_dim, hidden), nn.Tanh(), layer(hidden, hidden), nn.Tanh(),
                                   layer(hidden, act_dim, 0.01))
        if not discrete:
            self.log_std = nn.Parameter(torch.full((act_dim,), init_log_std))

    def value(self, x):
        return self.critic(x).squeeze(-1)

    def act(self, x, action=None):
        head = self.actor(x)
        dist = Categorical(logits=head) if self.discrete else Normal(head, self.log_std.exp().expand_as(head))
        if action is None:
            action = dist.sample()
        logp = dist.log_prob(action)
        ent = dist.entropy()
        if not self.discrete:
            logp, ent = logp.sum(-1), ent.sum(-1)
        return action, logp, ent, self.value(x)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)  # small networks: one thread is fastest, and the envs have their own
    envs = rltrain.make_vec(args.env, num_envs=args.num_envs, seed=args.seed, num_threads=args.threads)
    n, steps = args.num_envs, args.num_steps
    obs_dim = envs.single_observation_space.shape[0]
    discrete = envs.single_action_space.shape == ()
    act_dim = 1 if discrete else envs.single_action_space.shape[0]
    agent = Agent(obs_dim, envs.single_action_space.n if discrete else act_dim, discrete, args.hidden,
                  args.init_log_std)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    obs_rms, ret_rms = RunningMeanStd(obs_dim), RunningMeanStd(())
    disc_return = torch.zeros(n)

    def norm(x):
        return ((x - obs_rms.mean) / torch.sqrt(obs_rms.var + 1e-8)).clamp(-10, 10) if args.normalize else x

    obs_buf = torch.zeros(steps, n, obs_dim)
    act_buf = torch.zeros(steps, n) if discrete else torch.zeros(steps, n, act_dim)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros(steps, n) for _ in range(4))
    batch = n * steps
    minibatch = batch // args.minibatches
    iterations = args.total_steps // batch
    recent = []
    next_obs = torch.from_dlpack(envs.reset(seed=args.seed)[0])  # a view: copied into obs_buf below
    next_done = torch.zeros(n)
    start, global_step = time.time(), 0
    for it in range(1, iterations + 1):
        for g in optimizer.param_groups:
            g["lr"] = (1.0 - (it - 1.0) / iterations) * args.lr
        # rollout
        for t in range(steps):
            global_step += n
            obs_buf[t] = next_obs
            done_buf[t] = next_done
            with torch.no_grad():
                action, logp, _, value = agent.act(norm(next_obs))
            val_buf[t], act_buf[t], logp_buf[t] = value, action, logp
            a = action.numpy() if discrete else action.float().numpy()
            o, reward, term, trunc, info = envs.step(a)
            reward = torch.from_dlpack(reward).clone()
            term_t, trunc_t = torch.as_tensor(term).clone(), torch.as_tensor(trunc).clone()
            if trunc_t.any():  # truncation is not death: bootstrap from the observation that ended it
                idx = torch.nonzero(trunc_t & ~term_t).squeeze(-1)
                if len(idx):
                    with torch.no_grad():
                        final = torch.from_dlpack(info["final_obs_batch"])[idx]
                        reward[idx] += args.gamma * agent.value(norm(final))
            if args.normalize:  # reward scaling by the std of the discounted return (Gymnasium's NormalizeReward)
                disc_return = disc_return * args.gamma * (1 - done_buf[t]) + reward
                ret_rms.update(disc_return)
                reward = reward / torch.sqrt(ret_rms.var + 1e-8)
            rew_buf[t] = reward
            next_obs = torch.from_dlpack(o)
            next_done = (term_t | trunc_t).float()
            for i in np.flatnonzero(info["_episode_return"]):
                recent.append(float(info["episode_return"][i]))
            recent = recent[-100:]
        # GAE, with nextnonterminal as CleanRL writes it
        with torch.no_grad():
            next_value = agent.value(norm(next_obs))
            adv = torch.zeros(steps, n)
            last = 0
            for t in reversed(range(steps)):
                nonterminal = 1.0 - (next_done if t == steps - 1 else done_buf[t + 1])
                nv = next_value if t == steps - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * nv * nonterminal - val_buf[t]
                adv[t] = last = delta + args.gamma * args.gae_lambda * nonterminal * last
            ret = adv + val_buf
        # flatten; epochs x minibatches
        b_obs, b_act = norm(obs_buf.reshape(-1, obs_dim)), act_buf.reshape(batch, *act_buf.shape[2:])
        b_logp, b_adv, b_ret, b_val = logp_buf.reshape(-1), adv.reshape(-1), ret.reshape(-1), val_buf.reshape(-1)
        clipfracs, approx_kl = [], 0.0
        for _ in range(args.epochs):
            perm = torch.randperm(batch)
            for s in range(0, batch, minibatch):
                mb = perm[s:s + minibatch]
                _, newlogp, ent, newval = agent.act(b_obs[mb], b_act[mb].long() if discrete else b_act[mb])
                logratio = newlogp - b_logp[mb]
                ratio = logratio.exp()
                with torch.no_grad():
                    approx_kl = ((ratio - 1) - logratio).mean().item()
                    clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
                mb_adv = (b_adv[mb] - b_adv[mb].mean()) / (b_adv[mb].std() + 1e-8)
                pg_loss = torch.max(-mb_adv * ratio,
                                    -mb_adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                v_clipped = b_val[mb] + (newval - b_val[mb]).clamp(-args.clip_coef, args.clip_coef)
                v_loss = 0.5 * torch.max((newval - b_ret[mb]) ** 2, (v_clipped - b_ret[mb]) ** 2).mean()
                loss = pg_loss + args.vf_coef * v_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
        if args.normalize:  # after the update, so that its old and new log-probs saw the same normalization
            obs_rms.update(obs_buf.reshape(-1, obs_dim))
        var_y = b_ret.var()
        explained_var = float("nan") if var_y == 0 else 1 - (b_ret - b_val).var().item() / var_y.item()
        mean_return = float(np.mean(recent)) if recent else float("nan")
        sps = int(global_step / (time.time() - start))
        if it % 10 == 0 or it == iterations:
            print(f"step {global_step}: mean return {mean_return:.1f} approx_kl {approx_kl:.4f} "
                  f"clipfrac {np.mean(clipfracs):.3f} explained_var {explained_var:.3f} SPS {sps}", flush=True)
        if args.target is not None and len(recent) == 100 and mean_return >= args.target:
            print(f"reached mean return {mean_return:.1f} >= {args.target} after {global_step} env steps")
            return 0
    envs.close()
    if args.target is not None:
        print(f"did not reach {args.target}: mean return {mean_return:.1f} after {global_step} env steps")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
