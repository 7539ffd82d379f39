from agents.policy import rollout

rollout()
