import numpy as np
import torch

from envs.vector import VectorEnv


def rollout():
    env = VectorEnv(8)
    first = torch.from_dlpack(env.reset())
    np.testing.assert_array_equal(first.numpy(), np.zeros((8, 3), np.float32))

    obs, reward = env.step(1.0)
    tensor = torch.from_dlpack(obs)
    np.testing.assert_array_equal(tensor.numpy(), np.ones((8, 3), np.float32))
    assert float(reward.sum()) == 8.0

    again = torch.from_dlpack(env.state)
    np.testing.assert_array_equal(again.numpy(), np.ones((8, 3), np.float32))
    np.testing.assert_array_equal(env.observation_tensor().numpy(), np.ones((8, 3), np.float32))
