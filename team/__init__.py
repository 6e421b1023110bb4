"""Who may change what: the roles of a team store (viewer, planner, admin), the person acting
(an Actor), and how a role is decided from the identity provider's claims, the operator's mapping
and the roles stored in the store (docs/THREAT_MODEL.md). Pure: imports only errors."""
