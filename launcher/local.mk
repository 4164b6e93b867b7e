# launcher/: fxt-run, which runs a program under the agent.
