"""The client compatibility suite (`make compat`): compat/run.py drives compat/flows/ for compat/clients.py."""
